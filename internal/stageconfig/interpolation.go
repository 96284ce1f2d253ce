package stageconfig

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// OmegaConf, which every vllm-omni release loads configs with
// (vllm_omni/config/yaml_util.py@7f2b1e93..2ce15ab7 :27 load_yaml_config),
// reads `${` in any string value as the start of an interpolation, which
// can read the machine's environment (${oc.env:NAME}) into the config. In a
// string that holds `${`, a run of backslashes right before a `${` is
// halved, and an odd run leaves the `${` as text: `\${` reads as `${`,
// `\\${` as `\` and an interpolation. Backslashes anywhere else are text.

// escapeInterpolation returns the text that OmegaConf reads, resolved
// once, as s: every `${` is written after twice the backslashes that
// precede it, plus one. Text without `${` is returned unchanged.
func escapeInterpolation(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	run := 0 // backslashes written just before i
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			run++
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			b.WriteString(strings.Repeat(`\`, run+1))
			run = 0
		default:
			run = 0
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// loaderStrNode builds a string scalar that vllm-omni's loader reads back
// as v, resolved once: strNode of escapeInterpolation(v). It is for values
// that the loader resolves exactly once, such as the deploy config's
// `pipeline:`; a value resolved more than once cannot be escaped this way.
func loaderStrNode(v string) *yaml.Node { return strNode(escapeInterpolation(v)) }
