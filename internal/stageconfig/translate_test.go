package stageconfig

import (
	"strings"
	"testing"
)

func TestTranslateKey(t *testing.T) {
	upper := strings.ToUpper
	for _, tc := range []struct {
		name     string
		stage    string // one stage_args stage, indented under `- `
		from, to []string
		what     Translation
		old, new string
		want     string // the stage list after
	}{{
		name:  "not set",
		stage: "stage_id: 0\n    custom_process_input_func: a.b",
		from:  []string{"sync_process_input_func"}, to: []string{"custom_process_input_func"},
		what: NotSet,
		want: "  - stage_id: 0\n    custom_process_input_func: a.b\n",
	}, {
		name:  "renamed in place, comments kept",
		stage: "stage_id: 0\n    # why\n    sync_process_input_func: a.b # line\n    final_output: true",
		from:  []string{"sync_process_input_func"}, to: []string{"custom_process_input_func"},
		what: Renamed, old: "a.b", new: "A.B",
		want: "  - stage_id: 0\n    # why\n    custom_process_input_func: A.B # line\n    final_output: true\n",
	}, {
		name:  "the key read wins",
		stage: "stage_id: 0\n    sync_process_input_func: a.b\n    custom_process_input_func: c.d",
		from:  []string{"sync_process_input_func"}, to: []string{"custom_process_input_func"},
		what: TargetKept, old: "a.b",
		want: "  - stage_id: 0\n    custom_process_input_func: c.d\n",
	}, {
		name:  "a null key read is replaced",
		stage: "stage_id: 0\n    custom_process_input_func: null\n    sync_process_input_func: a.b",
		from:  []string{"sync_process_input_func"}, to: []string{"custom_process_input_func"},
		what: Renamed, old: "a.b", new: "A.B",
		want: "  - stage_id: 0\n    custom_process_input_func: A.B\n",
	}, {
		name:  "moved to an engine setting with its comment",
		stage: "stage_id: 0\n    runtime:\n      devices: \"0\"\n      # batch\n      max_batch_size: 4\n    engine_args:\n      model_stage: thinker",
		from:  []string{"runtime", "max_batch_size"}, to: []string{"engine_args", "max_num_seqs"},
		what: Moved, old: "4",
		want: "  - stage_id: 0\n    runtime:\n      devices: \"0\"\n    engine_args:\n      model_stage: thinker\n      # batch\n      max_num_seqs: 4\n",
	}, {
		// A null engine setting is replaced by the moved value; the
		// stage-level rename does not apply to a nested path.
		name:  "moved over a null engine setting",
		stage: "stage_id: 0\n    runtime:\n      max_batch_size: 4\n    engine_args:\n      max_num_seqs: null",
		from:  []string{"runtime", "max_batch_size"}, to: []string{"engine_args", "max_num_seqs"},
		what: Moved, old: "4",
		want: "  - stage_id: 0\n    engine_args:\n      max_num_seqs: 4\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, "stage_args:\n  - "+tc.stage+"\n")
			what, old, after := d.Stages()[0].TranslateKey(tc.from, tc.to, upper)
			if what != tc.what || old != tc.old || after != tc.new {
				t.Errorf("TranslateKey = %v, %q, %q; want %v, %q, %q", what, old, after, tc.what, tc.old, tc.new)
			}
			if got := strings.TrimPrefix(mustRender(t, d), "stage_args:\n"); got != tc.want {
				t.Errorf("stages after:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
