package diagcode

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// The scanner reads the engine's source and finds every place a code is
// given: a call of errorf or warnf (whatever their package), a call of any
// function that takes a diagcode.Code, the Code element of a composite
// literal (releases.Problem and pipeline.Diagnostic keep the code as a
// string), an element for a field of type diagcode.Code (tables), and an
// assignment to such a field. Each must be a diagcode constant, or pass on
// one that was checked where it was given; anything else, a literal or a
// value built at run time, is reported.

const importPath = "github.com/omnipd/terraform-provider-omni/internal/diagcode"

// srcFile is one Go source file; dir groups the files of a package.
type srcFile struct {
	dir, name, src string
}

type field struct {
	name string
	code bool // of type diagcode.Code
}

// scanResult is what the scan found.
type scanResult struct {
	problems []string
	// direct holds the severity of codes given straight to errorf or
	// warnf, or in a literal with its Severity beside it.
	direct map[Code]Severity
	// stored holds the codes given to something that passes them on later:
	// a table, a Problem, a Violation, a helper's parameter.
	stored map[Code]bool
	// forwarded is the severity of the errorf and warnf calls that pass on
	// a stored code.
	forwarded Severity
	// sites counts the places a constant was given, by code.
	sites map[Code]int
}

// severityOf is what the scan says a code is reported as.
func (r *scanResult) severityOf(c Code) Severity {
	s := r.direct[c]
	if r.stored[c] {
		s |= r.forwarded
	}
	return s
}

type pkgInfo struct {
	types    map[string]ast.Expr // named types declared in the package
	emitters map[string][]int    // function name → indices of its Code parameters
}

type scanner struct {
	fset     *token.FileSet
	consts   map[string]Code // diagcode's constants by name
	pkgs     map[string]*pkgInfo
	exported map[string][]int // exported emitters, callable from any package
	fields   map[string]bool  // names of fields of type diagcode.Code anywhere
	res      scanResult

	// per file
	dir     string
	dc      string          // the file's name for the diagcode package, "" if not imported
	params  map[string]bool // parameters of type diagcode.Code in the function being read
	handled map[*ast.CompositeLit]bool
	allowed map[*ast.CallExpr]bool // conversions accepted as passing a code on
}

func scan(files []srcFile, consts map[string]Code) scanResult {
	s := &scanner{
		fset:     token.NewFileSet(),
		consts:   consts,
		pkgs:     map[string]*pkgInfo{},
		exported: map[string][]int{},
		fields:   map[string]bool{"Code": true},
		res:      scanResult{direct: map[Code]Severity{}, stored: map[Code]bool{}, sites: map[Code]int{}},
	}
	parsed := make([]*ast.File, len(files))
	for i, f := range files {
		af, err := parser.ParseFile(s.fset, f.name, f.src, parser.SkipObjectResolution)
		if err != nil {
			s.res.problems = append(s.res.problems, err.Error())
			continue
		}
		parsed[i] = af
		s.declarations(f.dir, af)
	}
	for i, af := range parsed {
		if af != nil {
			s.file(files[i].dir, af)
		}
	}
	return s.res
}

func importName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "diagcode"
		}
	}
	return ""
}

func (s *scanner) pkg(dir string) *pkgInfo {
	p := s.pkgs[dir]
	if p == nil {
		p = &pkgInfo{types: map[string]ast.Expr{}, emitters: map[string][]int{}}
		s.pkgs[dir] = p
	}
	return p
}

func isCodeType(e ast.Expr, dc string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || dc == "" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == dc && sel.Sel.Name == "Code"
}

// declarations records a file's named types, the functions that take a
// code, and the fields of type diagcode.Code.
func (s *scanner) declarations(dir string, f *ast.File) {
	dc := importName(f)
	p := s.pkg(dir)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.TypeSpec:
			p.types[n.Name.Name] = n.Type
		case *ast.StructType:
			for _, fl := range n.Fields.List {
				if isCodeType(fl.Type, dc) {
					for _, name := range fl.Names {
						s.fields[name.Name] = true
					}
				}
			}
		case *ast.FuncDecl:
			var idx []int
			i := 0
			for _, fl := range n.Type.Params.List {
				k := max(len(fl.Names), 1)
				if isCodeType(fl.Type, dc) {
					for j := range k {
						idx = append(idx, i+j)
					}
				}
				i += k
			}
			if len(idx) > 0 {
				p.emitters[n.Name.Name] = idx
				if n.Name.IsExported() {
					s.exported[n.Name.Name] = idx
				}
			}
		}
		return true
	})
}

func (s *scanner) file(dir string, f *ast.File) {
	s.dir, s.dc = dir, importName(f)
	s.handled = map[*ast.CompositeLit]bool{}
	s.allowed = map[*ast.CallExpr]bool{}
	for _, d := range f.Decls {
		s.params = map[string]bool{}
		if fd, ok := d.(*ast.FuncDecl); ok {
			ast.Inspect(fd.Type, func(n ast.Node) bool { s.collectParams(n); return true })
			if fd.Body != nil {
				ast.Inspect(fd.Body, func(n ast.Node) bool { s.collectParams(n); return true })
			}
		}
		ast.Inspect(d, s.visit)
	}
}

// collectParams notes the parameters of type diagcode.Code of a function
// and of the function literals inside it.
func (s *scanner) collectParams(n ast.Node) {
	ft, ok := n.(*ast.FuncType)
	if !ok || ft.Params == nil {
		return
	}
	for _, fl := range ft.Params.List {
		if isCodeType(fl.Type, s.dc) {
			for _, name := range fl.Names {
				s.params[name.Name] = true
			}
		}
	}
}

func (s *scanner) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.CallExpr:
		s.call(n)
	case *ast.CompositeLit:
		if !s.handled[n] {
			s.literal(n, s.structFields(n.Type, 0), s.elemFields(n.Type))
		}
	case *ast.AssignStmt:
		if len(n.Lhs) == len(n.Rhs) {
			for i, l := range n.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok && s.fields[sel.Sel.Name] {
					s.site(n.Rhs[i], 0, false, "the value assigned to "+s.text(l))
				}
			}
		}
	case *ast.ValueSpec:
		if n.Type != nil && isCodeType(n.Type, s.dc) {
			for _, v := range n.Values {
				s.site(v, 0, false, "the value of "+n.Names[0].Name)
			}
		}
	}
	return true
}

func (s *scanner) call(c *ast.CallExpr) {
	if isCodeType(c.Fun, s.dc) && !s.allowed[c] {
		s.problem(c, "%s converts a value to diagcode.Code at run time; pass a constant", s.text(c))
	}
	var name string
	switch f := c.Fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	switch name {
	case "errorf", "warnf":
		sev := Error
		if name == "warnf" {
			sev = Warning
		}
		if len(c.Args) > 0 {
			s.site(c.Args[0], sev, true, "the code given to "+name)
		}
		return
	}
	idx, ok := s.pkg(s.dir).emitters[name]
	if !ok {
		idx = s.exported[name]
	}
	for _, i := range idx {
		if i < len(c.Args) {
			s.site(c.Args[i], 0, false, "the code given to "+name)
		}
	}
}

// structFields resolves a literal's type to a struct's fields, nil when it
// is not a struct this scan can see.
func (s *scanner) structFields(t ast.Expr, depth int) []field {
	switch t := t.(type) {
	case *ast.StructType:
		var out []field
		for _, fl := range t.Fields.List {
			code := isCodeType(fl.Type, s.dc)
			for _, n := range fl.Names {
				out = append(out, field{n.Name, code || n.Name == "Code"})
			}
			if len(fl.Names) == 0 {
				out = append(out, field{"", code})
			}
		}
		return out
	case *ast.Ident:
		if d, ok := s.pkg(s.dir).types[t.Name]; ok && depth < 4 {
			return s.structFields(d, depth+1)
		}
	}
	return nil
}

// elemFields is the struct fields of a slice's, array's or map's elements.
func (s *scanner) elemFields(t ast.Expr) []field {
	for depth := 0; depth < 4; depth++ {
		switch tt := t.(type) {
		case *ast.ArrayType:
			return s.structFields(tt.Elt, 0)
		case *ast.MapType:
			return s.structFields(tt.Value, 0)
		case *ast.Ident:
			d, ok := s.pkg(s.dir).types[tt.Name]
			if !ok {
				return nil
			}
			t = d
		default:
			return nil
		}
	}
	return nil
}

func isContainer(t ast.Expr, p *pkgInfo) bool {
	for depth := 0; depth < 4; depth++ {
		switch tt := t.(type) {
		case *ast.ArrayType, *ast.MapType:
			return true
		case *ast.Ident:
			d, ok := p.types[tt.Name]
			if !ok {
				return false
			}
			t = d
		default:
			return false
		}
	}
	return false
}

// literal checks the code elements of a composite literal whose struct
// fields are fields (nil when unknown) and whose elements, for a slice or
// map, are structs with elem's fields.
func (s *scanner) literal(lit *ast.CompositeLit, fields, elem []field) {
	container := lit.Type != nil && isContainer(lit.Type, s.pkg(s.dir))
	var sev Severity
	if !container {
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok && keyName(kv) == "Severity" {
				switch v := kv.Value.(type) {
				case *ast.Ident:
					sev = severityName(v.Name)
				case *ast.SelectorExpr:
					sev = severityName(v.Sel.Name)
				}
			}
		}
	}
	for i, el := range lit.Elts {
		value := el
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			value = kv.Value
			if !container {
				name := keyName(kv)
				code := name == "Code" || (fields == nil && s.fields[name])
				if j := slices.IndexFunc(fields, func(f field) bool { return f.name == name }); j >= 0 && fields[j].code {
					code = true
				}
				if code {
					s.site(kv.Value, sev, false, "the "+name+" of a literal")
				}
			}
		} else if !container && i < len(fields) && fields[i].code {
			s.site(el, 0, false, "the "+fields[i].name+" of a literal")
		}
		if u, ok := value.(*ast.UnaryExpr); ok {
			value = u.X
		}
		if inner, ok := value.(*ast.CompositeLit); ok && inner.Type == nil && container {
			s.handled[inner] = true
			s.literal(inner, elem, nil)
		}
	}
}

func keyName(kv *ast.KeyValueExpr) string {
	if id, ok := kv.Key.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func severityName(name string) Severity {
	switch name {
	case "SeverityError":
		return Error
	case "SeverityWarning":
		return Warning
	}
	return 0
}

// site checks one place a code is given. sev is the severity it is
// reported with there, or 0 when it is stored to be reported later; emits
// is true for errorf and warnf, whose severity then also applies to the
// stored codes e passes on.
func (s *scanner) site(e ast.Expr, sev Severity, emits bool, what string) {
	e = ast.Unparen(e)
	if c, ok := s.constant(e); ok {
		s.use(c, sev)
		return
	}
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
		arg := ast.Unparen(call.Args[0])
		if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "string" {
			if c, ok := s.constant(arg); ok {
				s.use(c, sev)
				return
			}
			if s.forward(arg) {
				s.passOn(sev, emits)
				return
			}
		}
		if isCodeType(call.Fun, s.dc) {
			if sel, ok := arg.(*ast.SelectorExpr); ok && s.fields[sel.Sel.Name] {
				s.allowed[call] = true
				s.passOn(sev, emits)
				return
			}
		}
	}
	if s.forward(e) {
		s.passOn(sev, emits)
		return
	}
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		v, _ := strconv.Unquote(lit.Value)
		for name, c := range s.consts {
			if c.String() == v {
				s.problem(e, "%s is the literal %s: pass diagcode.%s", what, lit.Value, name)
				return
			}
		}
		s.problem(e, "%s is the literal %s: add a constant to internal/diagcode/codes.go and its entry to catalogue.go, and pass the constant", what, lit.Value)
		return
	}
	s.problem(e, "%s is %s, not a diagcode constant: codes are never built at run time; pass a constant (a table of constants for a value that varies)", what, s.text(e))
}

// constant reports whether e names a diagcode constant. A name the package
// does not declare is a problem of its own.
func (s *scanner) constant(e ast.Expr) (Code, bool) {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || s.dc == "" {
		return Code{}, false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != s.dc {
		return Code{}, false
	}
	c, ok := s.consts[sel.Sel.Name]
	if !ok {
		s.problem(e, "%s is not a code constant of internal/diagcode", s.text(e))
		return Code{}, true
	}
	return c, true
}

// forward reports whether e passes on a code given elsewhere: a parameter
// of type diagcode.Code, or a field that holds codes (which the scan
// checks where it is set).
func (s *scanner) forward(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return s.params[e.Name]
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == s.dc {
			return false
		}
		return s.fields[e.Sel.Name]
	}
	return false
}

func (s *scanner) use(c Code, sev Severity) {
	if c.IsZero() {
		return
	}
	s.res.sites[c]++
	if sev != 0 {
		s.res.direct[c] |= sev
	} else {
		s.res.stored[c] = true
	}
}

func (s *scanner) passOn(sev Severity, emits bool) {
	if emits {
		s.res.forwarded |= sev
	}
}

func (s *scanner) problem(n ast.Node, format string, args ...any) {
	pos := s.fset.Position(n.Pos())
	s.res.problems = append(s.res.problems, fmt.Sprintf("%s:%d: ", strings.Replace(pos.Filename, "../", "internal/", 1), pos.Line)+fmt.Sprintf(format, args...))
}

func (s *scanner) text(n ast.Node) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, s.fset, n)
	return b.String()
}
