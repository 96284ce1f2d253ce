package diagcode

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// lookup returns the catalogue's entry for c. Only these tests look an
// entry up by its code: the engine emits codes and the docs list areas.
func lookup(c Code) (Entry, bool) {
	for _, a := range catalogue {
		for _, e := range a.Entries {
			if e.Code == c {
				return e, true
			}
		}
	}
	return Entry{}, false
}

// engineSources reads every non-test Go file under internal/, but this
// package's own.
func engineSources(t *testing.T) []srcFile {
	t.Helper()
	var out []srcFile
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || path == filepath.Join("..", "diagcode") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, srcFile{dir: filepath.Dir(path), name: path, src: string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("found %d source files under internal/; the walk is broken", len(out))
	}
	return out
}

// declaredConstants reads this package's constants of type Code from its
// source: name → value.
func declaredConstants(t *testing.T) map[string]Code {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Code{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					break
				}
				cl, ok := vs.Values[i].(*ast.CompositeLit)
				if !ok {
					continue
				}
				if id, isCode := cl.Type.(*ast.Ident); !isCode || id.Name != "Code" {
					continue
				}
				var lit *ast.BasicLit
				if len(cl.Elts) == 1 {
					lit, _ = cl.Elts[0].(*ast.BasicLit)
				}
				if lit == nil {
					t.Errorf("%s: code %s is not Code{\"<name>\"}", fset.Position(name.Pos()), name.Name)
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				out[name.Name] = Code{v}
			}
			return true
		})
	}
	if len(out) == 0 {
		t.Fatal("no constants of type Code found")
	}
	return out
}

// Every constant has one catalogue entry, and every entry says what the
// code means and how to fix it.
func TestCatalogue_OneEntryPerConstant(t *testing.T) {
	consts := declaredConstants(t)
	declared := map[Code]string{}
	for name, c := range consts {
		if prev, dup := declared[c]; dup {
			t.Errorf("%s and %s are both %q", prev, name, c)
		}
		declared[c] = name
	}
	seen := map[Code]bool{}
	for _, a := range Areas() {
		if a.Title == "" || a.About == "" || len(a.Entries) == 0 {
			t.Errorf("area %q needs a title, a sentence about it and entries", a.Title)
		}
		for _, e := range a.Entries {
			if seen[e.Code] {
				t.Errorf("%s has two catalogue entries", e.Code)
			}
			seen[e.Code] = true
			if _, ok := declared[e.Code]; !ok {
				t.Errorf("catalogue entry %q is not a constant in codes.go", e.Code)
			}
			for what, text := range map[string]string{"meaning": e.Meaning, "fix": e.Fix} {
				switch {
				case strings.TrimSpace(text) == "":
					t.Errorf("%s has no %s", e.Code, what)
				case !strings.HasSuffix(text, "."):
					t.Errorf("%s: the %s %q is not a sentence ending in a full stop", e.Code, what, text)
				case strings.ContainsAny(text, "|\n"):
					t.Errorf("%s: the %s holds | or a newline, which break the docs' table", e.Code, what)
				}
			}
			if e.Severity != Error && e.Severity != Warning && e.Severity != ErrorOrWarning {
				t.Errorf("%s has severity %d", e.Code, e.Severity)
			}
		}
	}
	for c, name := range declared {
		if !seen[c] {
			t.Errorf("%s (%q) has no catalogue entry: add one to catalogue.go", name, c)
		}
	}
}

// The catalogue is complete both ways against the engine's source: every
// emitter gives a constant (never a literal, never a code built at run
// time), every code given is in the catalogue with the severity it is
// reported with, and every entry is given somewhere.
func TestCatalogue_MatchesEmitters(t *testing.T) {
	consts := declaredConstants(t)
	res := scan(engineSources(t), consts)
	for _, p := range res.problems {
		t.Error(p)
	}
	names := make([]string, 0, len(consts))
	for name := range consts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := consts[name]
		e, ok := lookup(c)
		if !ok {
			continue // TestCatalogue_OneEntryPerConstant says so
		}
		if res.sites[c] == 0 {
			t.Errorf("%s (%q) is in the catalogue but nothing emits it: remove its constant and entry, or emit it", name, c)
			continue
		}
		if got := res.severityOf(c); got != e.Severity {
			t.Errorf("%s (%q): the catalogue says %s, the emitters report it as %s", name, c, e.Severity, got)
		}
	}
	if res.forwarded != Error {
		// Stored codes (tables, releases' problems and violations) take
		// the severity of the calls that pass them on; the scan cannot
		// tell which stored code reaches which call, so they must agree.
		t.Errorf("codes stored and passed on later are reported as %s; the scan assumes errors only: pass warnings' codes straight to warnf", res.forwarded)
	}
}

const scanHeader = `package p

import "github.com/omnipd/terraform-provider-omni/internal/diagcode"

type Diagnostics []Diagnostic

type Diagnostic struct {
	Severity int
	Code     string
}

const (
	SeverityError = iota
	SeverityWarning
)

func (ds *Diagnostics) errorf(code diagcode.Code, summary string) {
	*ds = append(*ds, Diagnostic{Severity: SeverityError, Code: string(code)})
}

func (ds *Diagnostics) warnf(code diagcode.Code, summary string) {
	*ds = append(*ds, Diagnostic{Severity: SeverityWarning, Code: string(code)})
}

type Problem struct{ Code string }

type row struct {
	key  string
	code diagcode.Code
}

func check(ds *Diagnostics, v string, code diagcode.Code) { ds.errorf(code, v) }
`

// The scan accepts the ways the engine gives codes and tells which
// severity each gets.
func TestScan_Accepts(t *testing.T) {
	src := scanHeader + `
func f(ds *Diagnostics, p *Problem, what string) {
	ds.errorf(diagcode.TPMismatch, "")
	ds.warnf((diagcode.GPUMemoryTight), "")
	for _, k := range []struct {
		key  string
		code diagcode.Code
	}{{"a", diagcode.PortInvalid}} {
		ds.errorf(k.code, k.key)
	}
	for _, r := range []row{{"b", diagcode.PortReserved}, {key: "c", code: diagcode.PortCollision}} {
		ds.errorf(r.code, r.key)
	}
	check(ds, what, diagcode.GPUsRange)
	ds.errorf(diagcode.Code(p.Code), "")
	_ = Diagnostics{{Severity: SeverityWarning, Code: string(diagcode.HeadWaitUnused)}}
}

func g() *Problem { return &Problem{Code: string(diagcode.ReleaseNone)} }
`
	res := scan([]srcFile{{dir: "p", name: "p.go", src: src}}, declaredConstants(t))
	if len(res.problems) > 0 {
		t.Fatalf("problems in sound source: %q", res.problems)
	}
	want := map[Code]Severity{
		TPMismatch: Error, GPUMemoryTight: Warning, PortInvalid: Error, PortReserved: Error,
		PortCollision: Error, GPUsRange: Error, HeadWaitUnused: Warning, ReleaseNone: Error,
	}
	for c, sev := range want {
		if res.sites[c] != 1 {
			t.Errorf("%s found at %d sites, want 1", c, res.sites[c])
		}
		if got := res.severityOf(c); got != sev {
			t.Errorf("%s is %s, want %s", c, got, sev)
		}
	}
	if len(res.sites) != len(want) {
		t.Errorf("found codes %v, want those of %v", res.sites, want)
	}
}

// The scan reports every way of giving a code that bypasses the catalogue.
func TestScan_Catches(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"literal", `ds.errorf("tp_mismatch", "")`, `the code given to errorf is the literal "tp_mismatch": pass diagcode.TPMismatch`},
		{"literal to warnf", `ds.warnf("new_code", "")`, `the code given to warnf is the literal "new_code": add a constant`},
		{"built", `ds.errorf(diagcode.Code(what+"_not_absolute"), "")`, `diagcode.Code(what + "_not_absolute"), not a diagcode constant`},
		{"converted variable", `ds.errorf(diagcode.Code(what), "")`, "converts a value to diagcode.Code at run time"},
		{"map of codes", `ds.errorf(map[string]diagcode.Code{"a": diagcode.TPMismatch}[what], "")`, "not a diagcode constant"},
		{"unknown constant", `ds.errorf(diagcode.NoSuchCode, "")`, "diagcode.NoSuchCode is not a code constant"},
		{"problem literal", `_ = &Problem{Code: "release_none"}`, `the Code of a literal is the literal "release_none"`},
		{"problem positional", `_ = Problem{"release_none"}`, `the Code of a literal is the literal "release_none"`},
		{"problem built", `_ = Problem{Code: "release_" + what}`, `the Code of a literal is "release_" + what`},
		{"diagnostic literal", `_ = Diagnostics{{Severity: SeverityError, Code: "config_unreadable"}}`, `the literal "config_unreadable"`},
		{"positional table", `_ = []struct {
		key  string
		code diagcode.Code
	}{{"a", "port_invalid"}}`, `the code of a literal is the literal "port_invalid"`},
		{"named table", `_ = []row{{"a", "port_invalid"}}`, `the code of a literal is the literal "port_invalid"`},
		{"keyed table", `_ = row{key: "a", code: "port_invalid"}`, `the code of a literal is the literal "port_invalid"`},
		{"assignment", `var r row; r.code = "port_invalid"; _ = r`, `the value assigned to r.code is the literal "port_invalid"`},
		{"variable", `var c diagcode.Code = "port_invalid"; ds.errorf(c, "")`, `the value of c is the literal "port_invalid"`},
		{"helper", `check(ds, what, "gpus_range")`, `the code given to check is the literal "gpus_range"`},
		{"constant of another type", `ds.errorf(SeverityError, "")`, "the code given to errorf is SeverityError"},
	}
	consts := declaredConstants(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := scanHeader + "\nfunc f(ds *Diagnostics, what string) {\n\t" + tc.body + "\n}\n"
			res := scan([]srcFile{{dir: "p", name: "p.go", src: src}}, consts)
			found := false
			for _, p := range res.problems {
				found = found || strings.Contains(p, tc.want)
			}
			if !found {
				t.Errorf("want a problem with %q, got %q", tc.want, res.problems)
			}
		})
	}
}

// errorf in a package that does not import diagcode is still an emitter.
func TestScan_CatchesWithoutImport(t *testing.T) {
	src := "package q\n\nfunc f(ds interface{ errorf(string, string) }, code string) {\n\tds.errorf(code, \"\")\n}\n"
	res := scan([]srcFile{{dir: "q", name: "q.go", src: src}}, declaredConstants(t))
	if len(res.problems) != 1 || !strings.Contains(res.problems[0], "q.go:4: the code given to errorf is code, not a diagcode constant") {
		t.Errorf("got %q", res.problems)
	}
}
