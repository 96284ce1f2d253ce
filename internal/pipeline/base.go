package pipeline

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// loadBase parses the user's base config, or loads the named or inferred
// preset. It returns the document, the path to blame for problems inside
// it, and whether it came from the user.
func loadBase(spec Spec, ds *Diagnostics) (*stageconfig.Document, Path) {
	if spec.BaseConfig != "" {
		path := AttrPath("base_config")
		doc, err := stageconfig.Parse([]byte(spec.BaseConfig))
		if err != nil {
			ds.errorf("base_config_invalid", path, "base_config is not a usable stage config",
				"%s. Pass a vllm-omni stage config in the stage_args or stages dialect, for example with file(\"qwen3_omni_moe.yaml\").", describeParseError(err, []byte(spec.BaseConfig)))
			return nil, path
		}
		return doc, path
	}
	name := spec.Preset
	path := AttrPath("preset")
	if name == "" {
		inferred, ok := presets.ForModel(spec.Model)
		if !ok {
			ds.errorf("preset_not_inferred", AttrPath("model"), "no preset matches this model",
				"model %q does not name a model with an embedded preset. Set preset to one of %s, or pass your own stage config in base_config.",
				spec.Model, strings.Join(presets.Names(), ", "))
			return nil, AttrPath("model")
		}
		name, path = inferred, AttrPath("model")
	}
	if !presets.Known(name) {
		ds.errorf("preset_unknown", AttrPath("preset"), "unknown preset",
			"preset %q is not embedded in this provider. Use one of %s, or pass your own stage config in base_config.",
			name, strings.Join(presets.Names(), ", "))
		return nil, path
	}
	doc, err := presets.Load(name)
	if err != nil {
		ds.errorf("preset_unreadable", path, "embedded preset cannot be read", "%v", err)
		return nil, path
	}
	return doc, path
}

func describeParseError(err error, src []byte) string {
	var pe *stageconfig.ParseError
	if errors.As(err, &pe) {
		if pe.Line == 0 {
			// yaml.v3 gives these two errors no position: find it here.
			if line := unknownAnchorLine(pe.Msg, src); line > 0 {
				return fmt.Sprintf("line %d: %s", line, pe.Msg)
			}
			if maxDepthError.MatchString(pe.Msg) {
				msg := fmt.Sprintf("the document nests more than %d levels deep", stageconfig.MaxDepth)
				if line := flowDepthLine(src, stageconfig.MaxDepth); line > 0 {
					return fmt.Sprintf("line %d: %s", line, msg)
				}
				return msg
			}
		}
		return pe.Error()
	}
	return fmt.Sprint(err)
}

var maxDepthError = regexp.MustCompile(`^exceeded max depth of \d+$`)

// flowDepthLine finds the line where flow collections ([ and {) first nest
// deeper than limit, or returns 0. Quoted text is not told apart: the line
// only points the reader to where to look.
func flowDepthLine(src []byte, limit int) int {
	depth, line := 0, 1
	for _, c := range src {
		switch c {
		case '\n':
			line++
		case '[', '{':
			if depth++; depth > limit {
				return line
			}
		case ']', '}':
			depth--
		}
	}
	return 0
}

var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.+)' referenced$`)

// unknownAnchorLine finds the line of the first `*name` alias, for yaml.v3's
// "unknown anchor" error, which carries no position.
func unknownAnchorLine(msg string, src []byte) int {
	m := unknownAnchor.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	alias := regexp.MustCompile(`\*` + regexp.QuoteMeta(m[1]) + `($|[\s,\]}])`)
	for i, line := range strings.Split(string(src), "\n") {
		if alias.MatchString(line) {
			return i + 1
		}
	}
	return 0
}
