package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// commentBase is a stage_args base with lists in both styles where the
// planner rewrites them: inputs as a block list, edges as a flow list, a
// runtime section with keys of the user's own, and edge defaults.
const commentBase = `stage_args:
  - stage_id: 0
    engine_args:
      model_stage: thinker
      worker_type: ar
      gpu_memory_utilization: 0.5
    final_output: true
    final_output_type: text
  - stage_id: 1
    engine_args: {model_stage: talker, worker_type: ar, gpu_memory_utilization: 0.4}
    engine_input_source:
      - 0
    default_sampling_params:
      stop:
        - "a"
        - "b"
  - stage_id: 2
    runtime:
      devices: "2"
      max_batch_size: 4
    engine_args: {model_stage: code2wav, worker_type: generation, gpu_memory_utilization: 0.1}
    engine_input_source: [1]
    final_output: true
    final_output_type: audio
runtime:
  enabled: true
  edges: [{from: 0, to: 1}, {from: 1, to: 2}]
  defaults:
    window_size: -1
`

// commentPlacements yields base with one comment added: after each line
// that holds a value (a line comment), and above each line (a head
// comment at that line's indentation). marker names the comment.
func commentPlacements(base string) (variants []string, markers []string) {
	lines := strings.Split(strings.TrimSuffix(base, "\n"), "\n")
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasSuffix(trimmed, "|") || strings.HasSuffix(trimmed, ">") {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		if strings.HasPrefix(trimmed, "- ") {
			indent += "  " // a comment above a list item may sit at the item's own indentation too
		}
		for _, c := range []struct {
			marker string
			text   func(string) string
		}{
			{fmt.Sprintf("line%d", i), func(m string) string { return l + "  # " + m }},
			{fmt.Sprintf("head%d", i), func(m string) string { return indent[:len(indent)-len(indent)%2] + "# " + m + "\n" + l }},
		} {
			out := append(append(append([]string{}, lines[:i]...), c.text(c.marker)), lines[i+1:]...)
			variants = append(variants, strings.Join(out, "\n")+"\n")
			markers = append(markers, c.marker)
		}
	}
	return variants, markers
}

// TestPlanKeepsEveryComment: a comment anywhere in a base config is in
// the planned config, in either output format: on the key it was written
// at, or, where that key is not written, carried to the next one. Over
// every line of several bases, as a line comment and as a head comment.
func TestPlanKeepsEveryComment(t *testing.T) {
	bases := map[string]string{"comment base": commentBase, "mini": miniBase, "legacy qwen3": readLocal(t, legacyQwen3),
		"legacy multiconnector": readLocal(t, legacyQwen3Multi), "stages qwen3": readLocal(t, stagesQwen3)}
	tried, planned := 0, 0
	for name, base := range bases {
		variants, markers := commentPlacements(base)
		for i, src := range variants {
			if _, err := stageconfig.Parse([]byte(src)); err != nil {
				continue // a comment where YAML has no room for one
			}
			for _, format := range []string{"", "stages", "stage_args"} {
				tried++
				spec := Spec{Model: seedModel, BaseConfig: src, Format: format}
				if format == "stages" {
					spec.Pipeline, spec.VLLMOmniVersion = "qwen3_omni_moe_pd", "0.28.0"
				}
				res, _ := Plan(spec)
				if res == nil {
					continue
				}
				planned++
				if !strings.Contains(res.ConfigYAML, "# "+markers[i]+"\n") {
					t.Errorf("%s, format %q: the comment %s is lost:\n%s\n--- base:\n%s", name, format, markers[i], res.ConfigYAML, src)
				}
			}
		}
	}
	if planned < 500 {
		t.Errorf("only %d of %d placements planned", planned, tried)
	}
	t.Logf("%d placements tried, %d planned", tried, planned)
}
