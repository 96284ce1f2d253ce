package stageconfig

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// Finding is a problem with a value of a parsed document: where it is, a
// stable code, and what to write instead.
type Finding struct {
	line, column int
	Code         diagcode.Code
	Summary      string
	Detail       string // starts with "line N: "
}

// want is what a known key holds.
type want int

const (
	wantInt    want = iota + 1 // a whole number
	wantNumber                 // a finite number
	wantBool                   // true or false (null reads as false)
	wantText                   // text; null reads as unset
	wantScalar                 // a value read as text: a number or text
	wantMap                    // a mapping; null reads as empty
	wantSeq                    // a list; null reads as empty
	wantAny                    // anything; only interpolations are refused
)

// rule is a key the planner reads or edits, by its path from where the
// rule applies: `*` stands for every key of a mapping, `[]` for every entry
// of a list.
type rule struct {
	path string
	want want
}

// engineRules are the engine settings the planner reads, under
// engine_args (stage_args) or flat on the stage (stages).
var engineRules = []rule{
	{"model_stage", wantText}, {"model_arch", wantText}, {"worker_type", wantText}, {"worker_cls", wantText},
	{"scheduler_cls", wantText}, {"engine_output_type", wantText},
	{"tensor_parallel_size", wantInt}, {"pipeline_parallel_size", wantInt}, {"data_parallel_size", wantInt},
	{"max_num_seqs", wantInt}, {"gpu_memory_utilization", wantNumber},
	{"parallel_config", wantMap},
	{"parallel_config.tensor_parallel_size", wantInt}, {"parallel_config.pipeline_parallel_size", wantInt},
	{"parallel_config.data_parallel_size", wantInt}, {"parallel_config.sequence_parallel_size", wantInt},
	{"parallel_config.cfg_parallel_size", wantInt},
	{"kv_transfer_config", wantMap},
	{"kv_transfer_config.kv_connector", wantText}, {"kv_transfer_config.kv_role", wantText},
	{"kv_transfer_config.kv_buffer_device", wantText}, {"kv_transfer_config.kv_buffer_size", wantScalar},
	{"kv_transfer_config.kv_connector_module_path", wantText},
	{"kv_transfer_config.kv_connector_extra_config", wantMap},
	{"kv_transfer_config.kv_connector_extra_config.mooncake_bootstrap_port", wantInt},
	{"kv_transfer_config.kv_connector_extra_config.connectors", wantSeq},
	{"kv_transfer_config.kv_connector_extra_config.connectors.[]", wantMap},
	{"kv_transfer_config.kv_connector_extra_config.connectors.[].kv_connector", wantText},
	{"kv_transfer_config.kv_connector_extra_config.connectors.[].kv_connector_module_path", wantText},
}

// stageRules are a stage's own keys, in both dialects.
var stageRules = []rule{
	{"stage_id", wantInt}, {"stage_type", wantText},
	{"engine_input_source", wantAny}, {"engine_input_source.[]", wantAny},
	{"final_output", wantBool}, {"final_output_type", wantText},
	{"is_prefill_only", wantBool}, {"is_decode_only", wantBool},
	{"custom_process_input_func", wantText}, {"sync_process_input_func", wantText},
	{"engine_args", wantMap},
	{"runtime", wantMap}, {"runtime.devices", wantAny}, {"runtime.devices.[]", wantAny},
	{"runtime.num_replicas", wantInt}, {"runtime.max_batch_size", wantInt},
	{"runtime.env", wantMap}, // its entries: linter.env
	{"input_connectors", wantMap}, {"input_connectors.*", wantAny},
	{"output_connectors", wantMap}, {"output_connectors.*", wantAny},
}

// stagesStageRules are the keys only a `stages` stage holds flat.
var stagesStageRules = []rule{
	{"devices", wantAny}, {"devices.[]", wantAny}, {"num_replicas", wantInt},
	{"env", wantMap},
}

// topRules are the top-level keys of both dialects.
var topRules = []rule{
	{"pipeline", wantText},
	{"platforms", wantMap}, {"platforms.*", wantMap}, {"platforms.*.stages", wantSeq},
	{"platforms.*.stages.[]", wantMap}, {"platforms.*.stages.[].stage_id", wantInt},
	{"platforms.*.stages.[].devices", wantAny},
}

// edgeRules and connectorRules hold for runtime.edges and
// runtime.connectors (stage_args), or their top-level keys (stages).
var (
	edgeRules = []rule{
		{"edges", wantSeq}, {"edges.[]", wantMap}, {"edges.[].from", wantInt}, {"edges.[].to", wantInt},
	}
	connectorRules = []rule{
		{"connectors", wantMap}, {"connectors.*", wantMap}, {"connectors.*.name", wantText},
	}
)

// Lint checks, with the types vllm-omni's loader gives them, the values
// the planner reads or edits: each stage's identity, topology, devices and
// engine settings, the edges, the connectors and the platform overrides. A
// wrong type there would be planned as if the key were unset
// (`tensor_parallel_size: "2"` as TP 1) or replaced (`runtime:` written as a
// list), so each is an error that says what to write. Every finding is
// returned, in document order.
func (d *Document) Lint() []Finding {
	out, _ := d.lint()
	return out
}

// Interpolation is a string OmegaConf reads as an interpolation.
type Interpolation struct {
	Line int
	Text string
}

// LintAll is Lint, and in the same pass the strings of the document,
// outside the values Lint checks, that OmegaConf reads as interpolations
// (`${...}`), in document order. vllm-omni resolves those when it loads the
// config.
func (d *Document) LintAll() ([]Finding, []Interpolation) {
	findings, checked := d.lint()
	var out []Interpolation
	var walk func(n *yaml.Node, isKey bool)
	walk = func(n *yaml.Node, isKey bool) {
		if n.Kind == yaml.ScalarNode && !isKey && !checked[n] {
			if r := pyRead(n); r.Kind == pyStr && hasInterpolation(r.Text) {
				out = append(out, Interpolation{Line: n.Line, Text: n.Value})
			}
		}
		for i, c := range n.Content {
			walk(c, n.Kind == yaml.MappingNode && i%2 == 0)
		}
	}
	walk(d.root, false)
	return findings, out
}

// lint runs every rule, and returns the findings and the nodes the rules
// looked at.
func (d *Document) lint() ([]Finding, map[*yaml.Node]bool) {
	l := linter{checked: map[*yaml.Node]bool{}}
	top := d.top()
	l.apply(top, "", topRules)
	prefix := ""
	if d.Dialect == StageArgs {
		l.apply(top, "", []rule{{"runtime", wantMap}, {"runtime.enabled", wantBool}, {"runtime.defaults", wantMap}})
		prefix = "runtime."
	} else {
		l.apply(top, "", []rule{{"async_chunk", wantBool}})
	}
	if container := d.sectionsParent(); container != nil && container.Kind == yaml.MappingNode {
		l.apply(container, prefix, edgeRules)
		l.apply(container, prefix, connectorRules)
	}
	for _, s := range d.Stages() {
		where := fmt.Sprintf("%s[%d].", d.Dialect, s.Index)
		l.apply(s.node, where, stageRules)
		if ea := resolve(mapGet(s.node, "engine_args")); ea != nil && ea.Kind == yaml.MappingNode {
			l.apply(ea, where+"engine_args.", engineRules)
		}
		if d.Dialect == Stages {
			l.apply(s.node, where, stagesStageRules)
			l.apply(s.node, where, engineRules)
		}
		l.env(s, where)
	}
	sort.SliceStable(l.out, func(i, j int) bool {
		if l.out[i].line != l.out[j].line {
			return l.out[i].line < l.out[j].line
		}
		return l.out[i].column < l.out[j].column
	})
	return l.out, l.checked
}

type linter struct {
	out     []Finding
	checked map[*yaml.Node]bool // nodes a rule looked at
}

// apply checks each rule's nodes below base; where names base in messages.
func (l *linter) apply(base *yaml.Node, where string, rules []rule) {
	for _, r := range rules {
		l.match(base, where, strings.Split(r.path, "."), r.want)
	}
}

// match finds the nodes at path below n and checks each.
func (l *linter) match(n *yaml.Node, where string, path []string, w want) {
	n = resolve(n)
	if n == nil {
		return
	}
	step, rest := path[0], path[1:]
	visit := func(child *yaml.Node, name string) {
		if len(rest) == 0 {
			l.check(child, where+name, w)
			return
		}
		l.match(child, where+name+".", rest, w)
	}
	switch step {
	case "[]":
		if n.Kind != yaml.SequenceNode {
			return
		}
		where = strings.TrimSuffix(where, ".")
		for i, c := range n.Content {
			visit(c, fmt.Sprintf("[%d]", i))
		}
	case "*":
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			visit(n.Content[i+1], n.Content[i].Value)
		}
	default:
		if n.Kind != yaml.MappingNode {
			return
		}
		if v := mapGet(n, step); v != nil {
			visit(v, step)
		}
	}
}

// env checks each entry of the stage's environments by the rule EnvVars
// reads them with (envEntry), naming the stage.
func (l *linter) env(s Stage, where string) {
	for _, m := range s.envMaps() {
		for i := 0; i+1 < len(m.n.Content); i += 2 {
			l.checked[resolve(m.n.Content[i+1])] = true
			if _, p := envEntry(m.n.Content[i], m.n.Content[i+1]); p != nil {
				l.out = append(l.out, Finding{line: p.line, column: p.column, Code: p.code, Summary: p.summary,
					Detail: fmt.Sprintf("line %d: %s%s.%s (%s) %s.", p.line, where, m.key, p.key, s.Describe(), p.problem)})
			}
		}
	}
}

func (l *linter) add(n *yaml.Node, code diagcode.Code, summary, format string, args ...any) {
	l.out = append(l.out, Finding{line: n.Line, column: n.Column, Code: code, Summary: summary,
		Detail: fmt.Sprintf("line %d: ", n.Line) + fmt.Sprintf(format, args...)})
}

const (
	summaryType   = "a value vllm-omni reads has the wrong type"
	summaryFinite = "a number is not finite"
	summaryShape  = "a key holds the wrong kind of value"
	summaryInterp = "a value the provider plans with is an OmegaConf interpolation"
)

// check checks one node against what its key holds.
func (l *linter) check(n *yaml.Node, key string, w want) {
	n = resolve(n)
	l.checked[n] = true
	if n.Kind != yaml.ScalarNode {
		l.checkCollection(n, key, w)
		return
	}
	r := pyRead(n)
	if r.Kind == pyStr && hasInterpolation(r.Text) {
		l.add(n, diagcode.YAMLInterpolation, summaryInterp,
			"%s is %q, an OmegaConf interpolation that vllm-omni resolves only when it loads the config; the provider must read or rewrite this value to plan, and cannot see what it stands for: write the value out.", key, r.Text)
		return
	}
	if r.Kind == pyNull && (w == wantBool || w == wantText || w == wantMap || w == wantSeq || w == wantAny || w == wantScalar) {
		return
	}
	switch w {
	case wantInt:
		l.checkInt(n, key, r)
	case wantNumber:
		l.checkNumber(n, key, r)
	case wantBool:
		l.checkBool(n, key, r)
	case wantText:
		l.checkText(n, key, r)
	case wantScalar:
		l.checkScalar(n, key, r)
	case wantMap, wantSeq:
		l.add(n, diagcode.YAMLShape, summaryShape, "%s is %s, where vllm-omni reads %s: write %s, or remove the key.", key, pyDescribe(r), wantName(w), wantExample(w))
	}
}

// checkCollection checks a mapping or a list n where its key holds w.
func (l *linter) checkCollection(n *yaml.Node, key string, w want) {
	switch {
	case w == wantMap && n.Kind != yaml.MappingNode:
		l.add(n, diagcode.YAMLShape, summaryShape, "%s is a list, where vllm-omni reads a mapping: write it as a mapping of keys, or remove it.", key)
	case w == wantSeq && n.Kind != yaml.SequenceNode:
		l.add(n, diagcode.YAMLShape, summaryShape, "%s is a mapping, where vllm-omni reads a list: write it as a list, or remove it.", key)
	case w != wantMap && w != wantSeq && w != wantAny:
		l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s, where vllm-omni reads %s: write %s.", key, kindName(n), wantName(w), wantExample(w))
	}
}

func (l *linter) checkBool(n *yaml.Node, key string, r pyScalar) {
	if r.Kind == pyBool {
		return
	}
	if r.Kind == pyStr && pyPlainKind(r.Text) == pyBool {
		l.add(n, diagcode.YAMLValueType, summaryType, "%s is the text %q (it is quoted), where vllm-omni reads a boolean: write %s without quotes.", key, r.Text, strings.ToLower(r.Text))
		return
	}
	l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s, where vllm-omni reads a boolean: write true or false.", key, pyDescribe(r))
}

func (l *linter) checkText(n *yaml.Node, key string, r pyScalar) {
	if r.Kind == pyStr {
		return
	}
	l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s, not text (vllm-omni's YAML loader follows YAML 1.1, which reads %s so): write it in quotes, %q, or the name you mean.", key, pyDescribe(r), n.Value, n.Value)
}

// checkScalar checks a value vllm-omni passes on as it reads it: a
// boolean where text was meant, or a number that is not finite.
func (l *linter) checkScalar(n *yaml.Node, key string, r pyScalar) {
	if r.Kind == pyBool {
		l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s (vllm-omni's YAML loader follows YAML 1.1, which reads %s so): write it in quotes, %q.", key, pyDescribe(r), n.Value, n.Value)
	} else if r.Kind == pyFloat && (math.IsNaN(r.Float) || math.IsInf(r.Float, 0)) {
		l.add(n, diagcode.YAMLValueNotFinite, summaryFinite, "%s is %s, which is not a finite number: write the value out.", key, n.Value)
	}
}

func (l *linter) checkInt(n *yaml.Node, key string, r pyScalar) {
	switch r.Kind {
	case pyInt:
		if _, fits := r.asInt(); !fits {
			l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s, too large for a count: write a whole number such as 2.", key, pyDescribe(r))
		}
		return
	case pyFloat:
		if math.IsNaN(r.Float) || math.IsInf(r.Float, 0) {
			l.add(n, diagcode.YAMLValueNotFinite, summaryFinite, "%s is %s, which is not a number: write a whole number such as 2.", key, n.Value)
			return
		}
		if r.Float == math.Trunc(r.Float) && math.Abs(r.Float) < 1<<53 {
			l.add(n, diagcode.YAMLValueType, summaryType, "%s is written as the float %s, where vllm-omni reads a whole number: write %d.", key, n.Value, int64(r.Float))
			return
		}
		l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s, where vllm-omni reads a whole number: write one, such as 2.", key, pyDescribe(r))
	case pyStr:
		if q := unquotedNumber(r.Text); q != "" {
			l.add(n, diagcode.YAMLValueType, summaryType, "%s is the text %q (it is quoted), which vllm-omni would pass on as text, not a number: write %s without quotes.", key, r.Text, q)
			return
		}
		var v12 int64
		if n.Style == 0 && n.Tag == tagInt && n.Decode(&v12) == nil {
			l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s: YAML 1.2 reads it as %d, but vllm-omni's loader follows YAML 1.1, which reads it as text: write %d.", key, n.Value, v12, v12)
			return
		}
		l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s, where vllm-omni reads a whole number: write one, such as 2.", key, pyDescribe(r))
	case pyNull:
		l.add(n, diagcode.YAMLValueType, summaryType, "%s is null, which vllm-omni would pass on instead of a number: write a whole number, or remove the key.", key)
	default:
		l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s (vllm-omni's YAML loader follows YAML 1.1, which reads %s so), where it reads a whole number: write one, such as 2.", key, pyDescribe(r), n.Value)
	}
}

func (l *linter) checkNumber(n *yaml.Node, key string, r pyScalar) {
	switch r.Kind {
	case pyInt:
		return
	case pyFloat:
		if math.IsNaN(r.Float) || math.IsInf(r.Float, 0) {
			l.add(n, diagcode.YAMLValueNotFinite, summaryFinite, "%s is %s, which is not a finite number: write a number such as 0.9.", key, n.Value)
		}
		return
	case pyStr:
		if q := unquotedNumber(r.Text); q != "" {
			l.add(n, diagcode.YAMLValueType, summaryType, "%s is the text %q (it is quoted), which vllm-omni would pass on as text, not a number: write %s without quotes.", key, r.Text, q)
			return
		}
	case pyNull:
		l.add(n, diagcode.YAMLValueType, summaryType, "%s is null, which vllm-omni would pass on instead of a number: write a number such as 0.9, or remove the key.", key)
		return
	}
	l.add(n, diagcode.YAMLValueType, summaryType, "%s is %s, where vllm-omni reads a number: write one, such as 0.9.", key, pyDescribe(r))
}

// unquotedNumber returns how to write a quoted number so that it reads as
// that number, or "" when the text is not a plain decimal number.
func unquotedNumber(s string) string {
	t := strings.TrimSpace(s)
	if _, err := strconv.ParseInt(t, 10, 64); err == nil {
		return t
	}
	if v, err := strconv.ParseFloat(t, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) && pyPlainKind(t) == pyFloat {
		return t
	}
	return ""
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return pyDescribe(pyRead(n))
}

func wantName(w want) string {
	switch w {
	case wantInt:
		return "a whole number"
	case wantNumber:
		return "a number"
	case wantBool:
		return "true or false"
	case wantText:
		return "text"
	case wantMap:
		return "a mapping"
	case wantSeq:
		return "a list"
	}
	return "a single value"
}

func wantExample(w want) string {
	switch w {
	case wantInt:
		return "a whole number such as 2"
	case wantNumber:
		return "a number such as 0.9"
	case wantBool:
		return "true or false"
	case wantText:
		return "a name in quotes"
	case wantMap:
		return "it as a mapping of keys"
	case wantSeq:
		return "it as a list"
	}
	return "a single value"
}
