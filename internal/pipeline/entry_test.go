package pipeline

import (
	"strings"
	"testing"
)

// TestStageNeverReachedWarns: a stage after the first that reads from no
// stage is planned, with a warning at base_config that names it and its
// line, and says whether vllm-omni fails the requests forwarded to it.
func TestStageNeverReachedWarns(t *testing.T) {
	for _, c := range []struct {
		name, base string
		want       string // "" for no warning; else the stage the warning names
		fails      bool
	}{
		{"a second entry stage", miniBaseWith(t, "    engine_input_source: [0]\n", ""), "stage 1 (talker) (line 6)", true},
		{"the last stage", miniBaseWith(t, "    engine_input_source: [1]\n", ""), "stage 2 (code2wav) (line 9)", true},
		{"one with an input function", miniBaseWith(t, "    engine_input_source: [0]\n", "    custom_process_input_func: m.f\n"), "stage 1 (talker) (line 6)", false},
		{"every stage reads from one before it", miniBase, "", false},
		{"the seed preset", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, ds := Plan(Spec{Model: seedModel, BaseConfig: c.base})
			if res == nil {
				t.Fatalf("not planned:\n%s", describeDiags(ds))
			}
			got := codesOf(ds, "stage_never_reached")
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("warned: %v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Path.String() != "base_config" || !strings.HasPrefix(got[0].Detail, c.want+" reads from no stage") {
				t.Fatalf("want one warning at base_config naming %s:\n%s", c.want, describeDiags(ds))
			}
			if strings.Contains(got[0].Detail, "raises ValueError") != c.fails {
				t.Errorf("says it raises: %v, want %v: %s", !c.fails, c.fails, got[0].Detail)
			}
			if !hasCodeAny(Check([]byte(c.base)), "stage_never_reached") {
				t.Errorf("validate_stage_config does not warn")
			}
		})
	}
}
