package stageconfig

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/envvar"
)

// A stage's environment reaches its process by two carriers: vllm-omni,
// which sets os.environ[str(key)] = str(value) from the config it loaded
// (vllm_omni/engine/stage_init_utils.py@d4a869fe :666-669,
// stage_runtime_env), and the plan's units and processes' env, which carry
// the text written. An entry passes only where both give the same name and
// text, and envvar's rule (systemd, a shell) takes them; envEntry is that
// one rule, read by Lint for the base config and by EnvVars for what the
// plan writes.

// EnvProblem is an entry of a stage's environment that cannot reach the
// stage's process as written.
type EnvProblem struct {
	key          string // as written
	line, column int
	code         diagcode.Code
	summary      string
	// problem says what is wrong and what to write; it follows the
	// entry's name in a message.
	problem string
}

func (p EnvProblem) Error() string { return p.key + " " + p.problem }

// envEntry judges one entry of an environment mapping: the value its
// process gets, or what stops it.
func envEntry(k, v *yaml.Node) (string, *EnvProblem) {
	k, v = resolve(k), resolve(v)
	if kr := pyRead(k); k.Kind != yaml.ScalarNode || kr.Kind != pyStr {
		return "", envProblem(k, k, diagcode.EnvNameInvalid, summaryEnvName,
			"is a name vllm-omni's loader reads as %s, which vllm-omni would set as another name than the units: write it in quotes, or rename it", kindName(k))
	}
	if err := envvar.Name(k.Value); err != nil {
		return "", envProblem(k, k, diagcode.EnvNameInvalid, summaryEnvName,
			"is not a name systemd or a shell takes (%v; ASCII letters, digits and _, not first a digit): systemd ignores the line and the stage starts without it; rename it", err)
	}
	if v.Kind != yaml.ScalarNode {
		return "", envProblem(k, v, diagcode.YAMLValueType, summaryType, "is %s, where vllm-omni reads a single value: write a single value in quotes", kindName(v))
	}
	r := pyRead(v)
	switch r.Kind {
	case pyStr:
		if hasInterpolation(r.Text) {
			return "", envProblem(k, v, diagcode.YAMLInterpolation, summaryInterp,
				"is %q, an OmegaConf interpolation that vllm-omni resolves only when it loads the config, where the units would carry it as written: write the value out", r.Text)
		}
	case pyBool:
		return "", envProblem(k, v, diagcode.YAMLValueType, summaryType, "is %s (vllm-omni's YAML loader follows YAML 1.1, which reads %s so): write it in quotes, %q", pyDescribe(r), v.Value, v.Value)
	case pyNull:
		return "", envProblem(k, v, diagcode.YAMLValueType, summaryType, "is null, which vllm-omni sets as the text None while the units would leave it out: write the value in quotes, or remove it")
	case pyInt, pyFloat:
		if r.Kind == pyFloat && (math.IsNaN(r.Float) || math.IsInf(r.Float, 0)) {
			return "", envProblem(k, v, diagcode.YAMLValueNotFinite, summaryFinite, "is %s, which is not a finite number: write the value out in quotes", v.Value)
		}
		if s := pythonStr(r); s != v.Value {
			return "", envProblem(k, v, diagcode.YAMLValueType, summaryType,
				"is %s, which vllm-omni sets as %q while the units would carry %q: write it in quotes, %q, or as %s", pyDescribe(r), s, v.Value, v.Value, s)
		}
	default:
		return "", envProblem(k, v, diagcode.YAMLValueType, summaryType, "is %q, which vllm-omni's loader does not read as a value: write it in quotes", v.Value)
	}
	if err := envvar.Value(v.Value); err != nil {
		return "", envProblem(k, v, diagcode.EnvValueInvalid, summaryEnvValue, "cannot be carried as written: %v; write it on one line, without control characters", err)
	}
	return v.Value, nil
}

func envProblem(k, at *yaml.Node, code diagcode.Code, summary, format string, args ...any) *EnvProblem {
	return &EnvProblem{key: k.Value, line: at.Line, column: at.Column, code: code, summary: summary, problem: fmt.Sprintf(format, args...)}
}

const (
	summaryEnvName  = "an environment variable's name cannot be set"
	summaryEnvValue = "an environment variable's value cannot be set"
)

// pythonStr is Python's str() of a number vllm-omni's loader read.
func pythonStr(r pyScalar) string {
	if r.Kind == pyInt {
		return r.Int.String()
	}
	return pyFloatRepr(r.Float)
}

// pyFloatRepr is Python's repr (and str) of a finite float: the shortest
// digits that read back as it, written out when the decimal exponent is
// from -4 to 15 (with ".0" on a whole number), and as d.ddde±XX otherwise
// (Python/pystrtod.c, format_float_short, mode 'r').
func pyFloatRepr(f float64) string {
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	sign := ""
	if strings.HasPrefix(e, "-") {
		sign, e = "-", e[1:]
	}
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := x + 1 // digits before the point
	if decpt <= -4 || decpt > 16 {
		if len(digits) > 1 {
			mant = digits[:1] + "." + digits[1:]
		} else {
			mant = digits
		}
		es := strconv.Itoa(abs(x))
		if len(es) < 2 {
			es = "0" + es
		}
		if x < 0 {
			return sign + mant + "e-" + es
		}
		return sign + mant + "e+" + es
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	}
	return sign + digits[:decpt] + "." + digits[decpt:]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// envMaps are the environment mappings of a stage: runtime.env, and in the
// `stages` dialect the flat env, each with its key path from the stage.
func (s Stage) envMaps() []struct {
	key string
	n   *yaml.Node
} {
	var out []struct {
		key string
		n   *yaml.Node
	}
	if rt := resolve(mapGet(s.node, "runtime")); rt != nil && rt.Kind == yaml.MappingNode {
		if env := resolve(mapGet(rt, "env")); env != nil && env.Kind == yaml.MappingNode {
			out = append(out, struct {
				key string
				n   *yaml.Node
			}{"runtime.env", env})
		}
	}
	if s.Dialect == Stages {
		if env := resolve(mapGet(s.node, "env")); env != nil && env.Kind == yaml.MappingNode {
			out = append(out, struct {
				key string
				n   *yaml.Node
			}{"env", env})
		}
	}
	return out
}

// EnvVars is the stage's environment as its process gets it, by name,
// and every entry that cannot reach the process as written, in document
// order: a name systemd or a shell would refuse or the loader reads as
// another type, a value that is not a single value, one the two carriers
// would set differently (a boolean, null, 0x10, 1.50), an interpolation,
// or a value with a control character.
func (s Stage) EnvVars() (map[string]string, []EnvProblem) {
	m := s.env()
	out := map[string]string{}
	if m == nil || m.Kind != yaml.MappingNode {
		return out, nil
	}
	var problems []EnvProblem
	for i := 0; i+1 < len(m.Content); i += 2 {
		v, p := envEntry(m.Content[i], m.Content[i+1])
		if p != nil {
			problems = append(problems, *p)
			continue
		}
		out[resolve(m.Content[i]).Value] = v
	}
	return out, problems
}

// EnvEntry is one entry of a stage's environment mappings, as written.
type EnvEntry struct {
	Map   string // the mapping, from the stage: runtime.env or env
	Name  string
	Value string // the scalar's text; "" for any other node
	Line  int
}

// EnvEntries lists the entries of every environment mapping of the stage
// (runtime.env's, then in the `stages` dialect the flat env's), each in
// document order, with the line of each name: the planner judges the names the
// plan or vLLM treats specially (envvar.Lookup) before it plans.
func (s Stage) EnvEntries() []EnvEntry {
	var out []EnvEntry
	for _, m := range s.envMaps() {
		for i := 0; i+1 < len(m.n.Content); i += 2 {
			k, v := resolve(m.n.Content[i]), resolve(m.n.Content[i+1])
			if k.Kind != yaml.ScalarNode {
				continue
			}
			e := EnvEntry{Map: m.key, Name: k.Value, Line: k.Line}
			if v.Kind == yaml.ScalarNode {
				e.Value = v.Value
			}
			out = append(out, e)
		}
	}
	return out
}

// KeyedText is a text value of a document with the key it is under.
type KeyedText struct {
	Path  string // dotted from the top, list entries as [i]
	Key   string // the nearest mapping key
	Value string
	Line  int
}

// Texts lists every value of the document that vllm-omni's loader reads as
// text, under a mapping key, in document order: what the planner judges
// for secrets (envvar.Secret), since every one of them is written into
// the planned config and the state.
func (d *Document) Texts() []KeyedText {
	var out []KeyedText
	var walk func(n *yaml.Node, path, key string)
	walk = func(n *yaml.Node, path, key string) {
		n = resolve(n)
		switch n.Kind {
		case yaml.ScalarNode:
			if r := pyRead(n); r.Kind == pyStr && key != "" {
				out = append(out, KeyedText{Path: path, Key: key, Value: r.Text, Line: n.Line})
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := resolve(n.Content[i]).Value
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(n.Content[i+1], p, k)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i), key)
			}
		}
	}
	walk(d.top(), "", "")
	return out
}
