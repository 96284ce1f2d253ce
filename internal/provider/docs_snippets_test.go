package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/zclconf/go-cty/cty"
)

// The Terraform snippets in the doc templates and the README cannot all be
// planned: some use providers the tests do not have (hashicorp/cloudinit,
// hashicorp/local, a cloud's machines), most are fragments. So this test
// parses each one and checks what it says about omni_pd_pipeline against
// the schema: every argument of an omni_pd_pipeline block is an input (and
// nested keys exist), and every attribute read from the resource or the
// data source exists at that path, followed through locals, for
// expressions, splats and for_each. A renamed or misspelt attribute in a
// guide then fails here, not in a user's plan.
func TestDocs_SnippetsMatchSchema(t *testing.T) {
	c := newSnippetChecker(t)
	snippets := 0
	for _, s := range docSnippets(t, fence) {
		snippets++
		c.check(s.where, s.text)
	}
	for _, e := range c.errs {
		t.Error(e)
	}
	// Guard against a checker that finds nothing: the guides read dozens
	// of attributes, cloud-init.md and get-started.md among them.
	if snippets < 7 || c.refs < 40 {
		t.Errorf("checked %d snippets and %d attribute reads; the docs hold more", snippets, c.refs)
	}
}

// The snippets are written as `terraform fmt` writes them.
func TestDocs_SnippetsFormatted(t *testing.T) {
	for _, s := range docSnippets(t, fence) {
		if got := string(hclwrite.Format([]byte(s.text))); got != s.text {
			t.Errorf("%s is not formatted; terraform fmt makes it:\n%s", s.where, got)
		}
	}
}

// docSnippets returns the code blocks that open with a line fence matches,
// in the doc templates and the README, each with where it is (file:line).
func docSnippets(t *testing.T, fence *regexp.Regexp) []snippet {
	t.Helper()
	var out []snippet
	for _, f := range snippetFiles() {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range codeBlocks(string(src), fence) {
			s.where = fmt.Sprintf("%s:%d", filepath.Base(f), s.line)
			out = append(out, s)
		}
	}
	return out
}

// snippetFiles lists the doc templates and the README.
func snippetFiles() []string {
	files, _ := filepath.Glob(filepath.Join("..", "..", "templates", "*.md.tmpl"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "templates", "*", "*.md.tmpl"))
	return append(append(files, more...), filepath.Join("..", "..", "README.md"))
}

// The checker finds what it is for: each mistake below is reported, and
// nothing else.
func TestDocs_SnippetCheckerCatches(t *testing.T) {
	src := `
resource "omni_pd_pipeline" "this" {
  model   = "m"
  prefil  = { host = "10.0.0.1" }
  decode  = { hots = "10.0.0.2" }
  gpu_count = 3
  stage_overrides = { talker = { anything = 1 } }
  triggers = { any_key = "x" }
  lifecycle {
    create_before_destroy = true
  }
}

data "omni_pd_pipeline" "d" {
  model = "m"
}

locals {
  launch = omni_pd_pipeline.this.launches[0]
  rules  = [for p in omni_pd_pipeline.this.ports : { name = p.name, sources = ["x"] }]
}

resource "terraform_data" "x" {
  for_each = { for l in data.omni_pd_pipeline.d.launches : l.host => l }

  input = {
    ok1 = [for p in local.launch.processes : p.unit_nam]
    ok2 = data.omni_pd_pipeline.d.stages[*].device
    ok3 = each.value.procs
    ok4 = [for r in local.rules : r.sources]
    ok5 = omni_pd_pipeline.this.config_yaml.path
    ok6 = one([for p in omni_pd_pipeline.this.ports : p.port if p.name == "api"])
    ok7 = omni_pd_pipeline.this.health.readiness_url
    ok8 = aws_instance.gpu.whatever
  }
}
`
	c := newSnippetChecker(t)
	c.check("synthetic", src)
	want := []string{
		`prefil is not an argument`,
		`decode.hots is not an argument`,
		`gpu_count is not an argument`,
		`p.unit_nam: no attribute unit_nam`,
		`[*].device: no attribute device`,
		`each.value.procs: no attribute procs`,
		`omni_pd_pipeline.this.config_yaml.path: path of a string`,
	}
	if len(c.errs) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(c.errs), len(want), strings.Join(c.errs, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(c.errs, func(e string) bool { return strings.Contains(e, w) }) {
			t.Errorf("not reported: %s\ngot:\n%s", w, strings.Join(c.errs, "\n"))
		}
	}
}

type snippet struct {
	line  int
	where string // file:line, from docSnippets
	text  string
}

// fence opens a terraform or hcl block.
var fence = regexp.MustCompile("(?m)^```(terraform|hcl)\\s*$")

// codeBlocks returns the code blocks of a Markdown text that open with a
// line fence matches.
func codeBlocks(md string, fence *regexp.Regexp) []snippet {
	var out []snippet
	for _, loc := range fence.FindAllStringIndex(md, -1) {
		body := md[loc[1]:]
		end := strings.Index(body, "\n```")
		if end < 0 {
			continue
		}
		out = append(out, snippet{line: strings.Count(md[:loc[0]], "\n") + 1, text: body[:end+1]})
	}
	return out
}

// snipType is what the checker knows of a value's type: an object with its
// attributes, a collection with its element, a scalar, or nil for unknown
// (anything not from omni_pd_pipeline, or a dynamic attribute), which is
// never checked.
type snipType struct {
	kind  byte // 'o' object, 'l' list, set or tuple, 'm' map, 's' scalar
	attrs map[string]*snipType
	elem  *snipType
}

var scalarType = &snipType{kind: 's'}

func fromTF(t tftypes.Type) *snipType {
	switch x := t.(type) {
	case tftypes.Object:
		o := &snipType{kind: 'o', attrs: map[string]*snipType{}}
		for k, v := range x.AttributeTypes {
			o.attrs[k] = fromTF(v)
		}
		return o
	case tftypes.List:
		return &snipType{kind: 'l', elem: fromTF(x.ElementType)}
	case tftypes.Set:
		return &snipType{kind: 'l', elem: fromTF(x.ElementType)}
	case tftypes.Map:
		return &snipType{kind: 'm', elem: fromTF(x.ElementType)}
	}
	if t.Equal(tftypes.DynamicPseudoType) {
		return nil
	}
	return scalarType
}

func (t *snipType) names() string {
	var out []string
	for k := range t.attrs {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

type snippetChecker struct {
	resource, data *snipType
	// inputs of each entity: the attributes a configuration may set.
	resourceInputs, dataInputs map[string]bool
	errs                       []string
	refs                       int

	where  string
	src    []byte
	locals map[string]hclsyntax.Expression
	ltypes map[string]*snipType
	anon   map[*hclsyntax.AnonSymbolExpr]*snipType
}

func newSnippetChecker(t *testing.T) *snippetChecker {
	t.Helper()
	ctx := context.Background()
	rs := resourceSchema(t)
	var dsResp datasource.SchemaResponse
	NewPDPipelineDataSource().Schema(ctx, datasource.SchemaRequest{}, &dsResp)
	ds := dsResp.Schema
	c := &snippetChecker{
		resource:       fromTF(rs.Type().TerraformType(ctx)),
		data:           fromTF(ds.Type().TerraformType(ctx)),
		resourceInputs: map[string]bool{},
		dataInputs:     map[string]bool{},
	}
	for name, a := range rs.Attributes {
		c.resourceInputs[name] = a.IsRequired() || a.IsOptional()
	}
	for name, a := range ds.Attributes {
		c.dataInputs[name] = a.IsRequired() || a.IsOptional()
	}
	return c
}

// errorf records a problem once, however often the walk meets it (a local
// value's expression, say, is walked where it is declared and where it is
// read).
func (c *snippetChecker) errorf(rng hcl.Range, format string, args ...any) {
	e := fmt.Sprintf("%s (snippet line %d): %s", c.where, rng.Start.Line, fmt.Sprintf(format, args...))
	if !slices.Contains(c.errs, e) {
		c.errs = append(c.errs, e)
	}
}

type snipScope struct {
	name   string
	t      *snipType
	parent *snipScope
}

func (s *snipScope) with(name string, t *snipType) *snipScope {
	return &snipScope{name: name, t: t, parent: s}
}

func (s *snipScope) lookup(name string) (*snipType, bool) {
	for ; s != nil; s = s.parent {
		if s.name == name {
			return s.t, true
		}
	}
	return nil, false
}

var metaArguments = map[string]bool{"count": true, "for_each": true, "depends_on": true, "provider": true}

func (c *snippetChecker) check(where, src string) {
	c.where, c.src = where, []byte(src)
	f, diags := hclsyntax.ParseConfig([]byte(src), where, hcl.InitialPos)
	if diags.HasErrors() {
		c.errs = append(c.errs, fmt.Sprintf("%s: not valid HCL: %v", where, diags))
		return
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		c.errs = append(c.errs, where+": not native syntax")
		return
	}
	c.locals = map[string]hclsyntax.Expression{}
	c.ltypes = map[string]*snipType{}
	c.anon = map[*hclsyntax.AnonSymbolExpr]*snipType{}
	for _, b := range body.Blocks {
		if b.Type == "locals" {
			for name, a := range b.Body.Attributes {
				c.locals[name] = a.Expr
			}
		}
	}
	for _, b := range body.Blocks {
		var sc *snipScope
		if b.Type == "resource" || b.Type == "data" {
			if fe, ok := b.Body.Attributes["for_each"]; ok {
				var each *snipType
				if t := c.typeOf(fe.Expr, nil); t != nil && (t.kind == 'm' || t.kind == 'l') {
					each = t.elem
				}
				sc = sc.with("each", &snipType{kind: 'o', attrs: map[string]*snipType{"key": scalarType, "value": each}})
			}
			if len(b.Labels) == 2 && b.Labels[0] == "omni_pd_pipeline" {
				if b.Type == "resource" {
					c.arguments(b, c.resource, c.resourceInputs)
				} else {
					c.arguments(b, c.data, c.dataInputs)
				}
			}
		}
		c.body(b.Body, sc)
	}
}

func (c *snippetChecker) body(b *hclsyntax.Body, sc *snipScope) {
	names := make([]string, 0, len(b.Attributes))
	for name := range b.Attributes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c.typeOf(b.Attributes[name].Expr, sc)
	}
	for _, blk := range b.Blocks {
		c.body(blk.Body, sc)
	}
}

// arguments checks an omni_pd_pipeline block's arguments against the
// entity's inputs, and the keys of nested objects against their types.
func (c *snippetChecker) arguments(b *hclsyntax.Block, schema *snipType, inputs map[string]bool) {
	for name, a := range b.Body.Attributes {
		switch {
		case metaArguments[name]:
		case !inputs[name]:
			c.errorf(a.SrcRange, "%s is not an argument of %s omni_pd_pipeline", name, b.Type)
		default:
			c.objectKeys(a.Expr, schema.attrs[name], name, b.Type)
		}
	}
	for _, nested := range b.Body.Blocks {
		if nested.Type != "lifecycle" {
			c.errorf(nested.TypeRange, "omni_pd_pipeline has no block %s", nested.Type)
		}
	}
}

func (c *snippetChecker) objectKeys(e hclsyntax.Expression, t *snipType, path, kind string) {
	oc, ok := e.(*hclsyntax.ObjectConsExpr)
	if !ok || t == nil || t.kind != 'o' {
		return
	}
	for _, item := range oc.Items {
		key, ok := staticKey(item.KeyExpr)
		if !ok {
			continue
		}
		if t.attrs[key] == nil {
			c.errorf(item.KeyExpr.Range(), "%s.%s is not an argument of %s omni_pd_pipeline (%s has: %s)", path, key, kind, path, t.names())
			continue
		}
		c.objectKeys(item.ValueExpr, t.attrs[key], path+"."+key, kind)
	}
}

func staticKey(e hclsyntax.Expression) (string, bool) {
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

func (c *snippetChecker) localType(name string) *snipType {
	if t, ok := c.ltypes[name]; ok {
		return t
	}
	e, ok := c.locals[name]
	if !ok {
		return nil
	}
	c.ltypes[name] = nil // a local that refers to itself is unknown
	t := c.typeOf(e, nil)
	c.ltypes[name] = t
	return t
}

// typeOf walks an expression, reporting every read of an attribute that
// omni_pd_pipeline does not have, and returns the expression's type.
func (c *snippetChecker) typeOf(e hclsyntax.Expression, sc *snipScope) *snipType {
	switch x := e.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		return c.traversal(x.Traversal, sc, x.SrcRange)
	case *hclsyntax.RelativeTraversalExpr:
		return c.traverse(c.typeOf(x.Source, sc), x.Traversal, x.SrcRange)
	case *hclsyntax.IndexExpr:
		return c.indexType(x, sc)
	case *hclsyntax.SplatExpr:
		return c.splatType(x, sc)
	case *hclsyntax.AnonSymbolExpr:
		return c.anon[x]
	case *hclsyntax.ForExpr:
		return c.forType(x, sc)
	case *hclsyntax.ObjectConsExpr:
		return c.objectType(x, sc)
	case *hclsyntax.ObjectConsKeyExpr:
		return c.typeOf(x.Wrapped, sc)
	case *hclsyntax.TupleConsExpr:
		var first *snipType
		for i, el := range x.Exprs {
			if t := c.typeOf(el, sc); i == 0 {
				first = t
			}
		}
		return &snipType{kind: 'l', elem: first}
	case *hclsyntax.FunctionCallExpr:
		return c.callType(x, sc)
	case *hclsyntax.TemplateWrapExpr:
		return c.typeOf(x.Wrapped, sc)
	case *hclsyntax.ParenthesesExpr:
		return c.typeOf(x.Expression, sc)
	case *hclsyntax.LiteralValueExpr:
		if x.Val.IsNull() {
			return nil
		}
		return scalarType
	}
	return c.operationType(e, sc)
}

// operationType walks a conditional, an operator or a template: each
// operand is checked, and the result is a scalar (unknown for a
// conditional, whose results may differ).
func (c *snippetChecker) operationType(e hclsyntax.Expression, sc *snipScope) *snipType {
	switch x := e.(type) {
	case *hclsyntax.ConditionalExpr:
		c.typeOf(x.Condition, sc)
		c.typeOf(x.TrueResult, sc)
		c.typeOf(x.FalseResult, sc)
		return nil
	case *hclsyntax.BinaryOpExpr:
		c.typeOf(x.LHS, sc)
		c.typeOf(x.RHS, sc)
		return scalarType
	case *hclsyntax.UnaryOpExpr:
		c.typeOf(x.Val, sc)
		return scalarType
	case *hclsyntax.TemplateExpr:
		for _, p := range x.Parts {
			c.typeOf(p, sc)
		}
		return scalarType
	case *hclsyntax.TemplateJoinExpr:
		c.typeOf(x.Tuple, sc)
		return scalarType
	}
	c.errorf(e.Range(), "the checker does not know the expression %T", e)
	return nil
}

// indexType is the type of collection[key]: an attribute of an object by
// a static key, else an element.
func (c *snippetChecker) indexType(x *hclsyntax.IndexExpr, sc *snipScope) *snipType {
	c.typeOf(x.Key, sc)
	t := c.typeOf(x.Collection, sc)
	if t == nil {
		return nil
	}
	if key, ok := staticKey(x.Key); ok && t.kind == 'o' {
		return c.attr(t, key, x.SrcRange)
	}
	return c.index(t, x.SrcRange)
}

// splatType is the list source[*].each makes, each read from an element.
func (c *snippetChecker) splatType(x *hclsyntax.SplatExpr, sc *snipScope) *snipType {
	src := c.typeOf(x.Source, sc)
	item := src
	if src != nil && src.kind == 'l' {
		item = src.elem
	}
	c.anon[x.Item] = item
	return &snipType{kind: 'l', elem: c.typeOf(x.Each, sc)}
}

// forType is the list or map a for expression makes, its variables bound
// to the collection's elements.
func (c *snippetChecker) forType(x *hclsyntax.ForExpr, sc *snipScope) *snipType {
	coll := c.typeOf(x.CollExpr, sc)
	var elem *snipType
	if coll != nil && (coll.kind == 'l' || coll.kind == 'm') {
		elem = coll.elem
	}
	inner := sc.with(x.ValVar, elem)
	if x.KeyVar != "" {
		inner = inner.with(x.KeyVar, scalarType)
	}
	if x.CondExpr != nil {
		c.typeOf(x.CondExpr, inner)
	}
	val := c.typeOf(x.ValExpr, inner)
	if x.KeyExpr == nil {
		return &snipType{kind: 'l', elem: val}
	}
	c.typeOf(x.KeyExpr, inner)
	if x.Group {
		return &snipType{kind: 'm', elem: &snipType{kind: 'l', elem: val}}
	}
	return &snipType{kind: 'm', elem: val}
}

// objectType is an object constructor's type; unknown when a key is not
// static.
func (c *snippetChecker) objectType(x *hclsyntax.ObjectConsExpr, sc *snipScope) *snipType {
	o := &snipType{kind: 'o', attrs: map[string]*snipType{}}
	for _, item := range x.Items {
		v := c.typeOf(item.ValueExpr, sc)
		key, ok := staticKey(item.KeyExpr)
		if !ok {
			c.typeOf(item.KeyExpr, sc)
			o = nil
			continue
		}
		if o != nil {
			o.attrs[key] = v
		}
	}
	if o == nil {
		return nil
	}
	return o
}

// callType is a function call's result, for the functions the snippets
// use: one that passes a collection's elements on keeps their type.
func (c *snippetChecker) callType(x *hclsyntax.FunctionCallExpr, sc *snipScope) *snipType {
	args := make([]*snipType, len(x.Args))
	for i, a := range x.Args {
		args[i] = c.typeOf(a, sc)
	}
	switch x.Name {
	case "one":
		if len(args) == 1 && args[0] != nil && args[0].kind == 'l' {
			return args[0].elem
		}
		return nil
	case "concat", "distinct", "tolist", "toset", "sort", "compact", "reverse":
		if len(args) > 0 {
			return args[0]
		}
		return nil
	case "values":
		if len(args) == 1 && args[0] != nil && args[0].kind == 'm' {
			return &snipType{kind: 'l', elem: args[0].elem}
		}
		return nil
	case "yamlencode", "jsonencode", "join", "format", "basename", "dirname", "file", "replace", "length", "max", "min",
		"startswith", "endswith", "sha256", "base64encode", "tostring", "tonumber", "lower", "upper", "trimspace":
		return scalarType
	}
	return nil
}

// traversal resolves a reference from its root: a for or each variable, a
// local value, the resource or the data source omni_pd_pipeline. Anything
// else (variables, modules, other resource types) is not checked.
func (c *snippetChecker) traversal(tr hcl.Traversal, sc *snipScope, rng hcl.Range) *snipType {
	root := tr.RootName()
	if t, ok := sc.lookup(root); ok {
		return c.traverse(t, tr[1:], rng)
	}
	name := func(i int) string {
		if i < len(tr) {
			if a, ok := tr[i].(hcl.TraverseAttr); ok {
				return a.Name
			}
		}
		return ""
	}
	var start *snipType
	var rest hcl.Traversal
	switch {
	case root == "local" && name(1) != "":
		return c.traverse(c.localType(name(1)), tr[2:], rng)
	case root == "omni_pd_pipeline" && name(1) != "":
		start, rest = c.resource, tr[2:]
	case root == "data" && name(1) == "omni_pd_pipeline" && name(2) != "":
		start, rest = c.data, tr[3:]
	default:
		return nil
	}
	// An instance key after the name (count, for_each).
	if len(rest) > 0 {
		if _, ok := rest[0].(hcl.TraverseIndex); ok {
			rest = rest[1:]
		}
	}
	return c.traverse(start, rest, rng)
}

func (c *snippetChecker) traverse(t *snipType, steps hcl.Traversal, rng hcl.Range) *snipType {
	for _, step := range steps {
		if t == nil {
			return nil
		}
		switch s := step.(type) {
		case hcl.TraverseAttr:
			t = c.attr(t, s.Name, rng)
		case hcl.TraverseIndex:
			if t.kind == 'o' && s.Key.Type() == cty.String {
				t = c.attr(t, s.Key.AsString(), rng)
			} else {
				t = c.index(t, rng)
			}
		default:
			return nil
		}
	}
	return t
}

func (c *snippetChecker) attr(t *snipType, name string, rng hcl.Range) *snipType {
	switch t.kind {
	case 'o':
		a, ok := t.attrs[name]
		if !ok {
			c.errorf(rng, "%s: no attribute %s (there are: %s)", c.text(rng), name, t.names())
			return nil
		}
		c.refs++
		return a
	case 'm':
		return t.elem
	case 'l':
		c.errorf(rng, "%s: %s of a list: index it or use [*]", c.text(rng), name)
	default:
		c.errorf(rng, "%s: %s of a string or number", c.text(rng), name)
	}
	return nil
}

func (c *snippetChecker) index(t *snipType, rng hcl.Range) *snipType {
	switch t.kind {
	case 'l', 'm':
		return t.elem
	case 's':
		c.errorf(rng, "%s: index of a string or number", c.text(rng))
	}
	return nil
}

// text is the source of a range of the snippet being checked.
func (c *snippetChecker) text(rng hcl.Range) string {
	if rng.Start.Byte < 0 || rng.End.Byte > len(c.src) || rng.Start.Byte > rng.End.Byte {
		return "?"
	}
	return string(c.src[rng.Start.Byte:rng.End.Byte])
}
