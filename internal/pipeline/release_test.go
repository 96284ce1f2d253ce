package pipeline

import (
	"reflect"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// thinkerAloneBase is a thinker alone that names no model class, so no
// release pipeline the provider knows is the one it describes.
const thinkerAloneBase = `stage_args:
  - stage_id: 0
    engine_args: {model_stage: thinker, worker_type: ar}
    final_output: true
    final_output_type: text
`

// chooseRelease refuses a vllm_omni_version, format or pipeline no release
// runs the plan with.
func TestReleaseDiagnostics(t *testing.T) {
	m := seedModel
	newer, _ := releases.Beyond()
	runPlanDiagnostics(t, []planDiagCase{
		{"stages base with no known topology written as stage_args", func(t *testing.T) Spec {
			return Spec{Model: "acme/omni-7b", Format: "stage_args", BaseConfig: readLocal(t, stagesQwen3), SplitStage: ptr(0)}
		}, "format_conversion_unsupported", "format"},
		{"stages output with no pipeline to name", func(*testing.T) Spec {
			return Spec{Model: "acme/omni-7b", Format: "stages", BaseConfig: miniBase}
		}, "release_none", "vllm_omni_version"},
		{"stages output on a release with no PD pipeline, for a pipeline the provider cannot register", func(*testing.T) Spec {
			return Spec{Model: "acme/omni-7b", Format: "stages", BaseConfig: thinkerAloneBase, VLLMOmniVersion: "0.28.0"}
		}, "release_no_pd", "vllm_omni_version"},
		{"a talker on a release whose PD serves the thinker alone", func(*testing.T) Spec {
			return Spec{Model: m, Format: "stages", VLLMOmniVersion: "0.27.0rc1"}
		}, "pd_thinker_only", "vllm_omni_version"},
		{"pipeline with stage_args output", func(*testing.T) Spec {
			return Spec{Model: m, Format: "stage_args", Pipeline: "qwen3_omni_moe_pd"}
		}, "pipeline_unused", "pipeline"},
		{"malformed version", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "v0.24"} }, "release_malformed", "vllm_omni_version"},
		{"version before PD", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.14.0"} }, "release_before_pd", "vllm_omni_version"},
		// 0.19.0rc1 left the table: PD was not wired there.
		{"0.19.0rc1, before PD was wired", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.19.0rc1"} }, "release_before_pd", "vllm_omni_version"},
		{"the 0.19 line", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.19"} }, "release_before_pd", "vllm_omni_version"},
		// Qwen3-Omni's PD input processors (thinker2talker, talker2code2wav)
		// are gone from 0.25.0rc1 on; Qwen2.5-Omni's from 0.24.0 on.
		{"Qwen3-Omni on 0.25.0rc1", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.25.0rc1"} }, "release_no_pd", "vllm_omni_version"},
		{"Qwen3-Omni on 0.26.0rc1", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.26.0rc1"} }, "release_no_pd", "vllm_omni_version"},
		{"Qwen2.5-Omni on 0.24.0", func(*testing.T) Spec { return Spec{Model: "Qwen/Qwen2.5-Omni-7B", VLLMOmniVersion: "0.24.0"} }, "release_no_pd", "vllm_omni_version"},
		{"version newer than the table", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: newer} }, "release_unknown_newer", "vllm_omni_version"},
		{"version not a known release", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.22.7"} }, "release_unknown", "vllm_omni_version"},
		{"a stage_args base with a talker on a release that loads only stages", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.28"} }, "pd_thinker_only", "vllm_omni_version"},
		{"async_chunk true on the plan's registration", func(t *testing.T) Spec {
			base, err := presets.Source(presets.Qwen3OmniMoeThinkerOnly)
			if err != nil {
				t.Fatal(err)
			}
			return Spec{Model: thinkingModel, BaseConfig: "async_chunk: true\n" + string(base), VLLMOmniVersion: "0.27.0rc1"}
		}, "registration_async_chunk", "base_config"},
		{"P2pNccl on a vLLM without it", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.24.0", Connector: ConnectorSpec{Name: "P2pNcclConnector", ExtraConfig: map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}}}
		}, "release_no_pd", "vllm_omni_version"},
		{"P2pNccl as a MultiConnector child on a vLLM without it", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.24.0", Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "P2pNcclConnector"}}}}}
		}, "release_no_pd", "vllm_omni_version"},
	})
}

// The release a plan is for names what it cannot run: a removed input
// processor names the processor and the releases that have it; and a
// base config whose processors the release has runs there.
func TestReleaseProcessors(t *testing.T) {
	for _, v := range []string{"0.25.0rc1", "0.26.0rc1"} {
		_, ds := Plan(Spec{Model: seedModel, VLLMOmniVersion: v})
		nopd := codesOf(ds, "release_no_pd")
		if len(nopd) != 1 || !strings.Contains(nopd[0].Detail, "no input processor "+processorPrefix+"thinker2talker") ||
			!strings.Contains(nopd[0].Detail, "0.24.0") {
			t.Errorf("%s: want release_no_pd naming thinker2talker and the releases that run the plan:\n%s", v, describeDiags(ds))
		}
		// A base without those processors plans there.
		if res := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: v, BaseConfig: miniBase}); res.Release != v {
			t.Errorf("%s with miniBase: release %s", v, res.Release)
		}
	}
	// A stages base written as stage_args takes its processors from the
	// preset: the release is judged by those, with the releases that work.
	for _, v := range []string{"0.25.0rc1", "0.26.0rc1"} {
		_, ds := Plan(Spec{Model: seedModel, BaseConfig: readLocal(t, stagesQwen3), SplitStage: ptr(0), Format: "stage_args", VLLMOmniVersion: v})
		nopd := codesOf(ds, "release_no_pd")
		if len(nopd) != 1 || !strings.Contains(nopd[0].Detail, "thinker2talker") || !strings.Contains(nopd[0].Detail, "0.24.0") || hasCodeAny(ds, "release_conformance") {
			t.Errorf("stages base as stage_args on %s: want one release_no_pd naming thinker2talker and 0.24.0, no conformance backstop:\n%s", v, describeDiags(ds))
		}
	}
	// Qwen2.5-Omni's default is the newest release with its processors.
	if res := mustPlan(t, Spec{Model: "Qwen/Qwen2.5-Omni-7B"}); res.Release != "0.22.0" {
		t.Errorf("Qwen2.5-Omni defaults to %s, want 0.22.0", res.Release)
	}
	for _, v := range []string{"0.20.0", "0.21.0rc1", "0.22.0", "0.23.0rc1"} {
		if res := mustPlan(t, Spec{Model: "Qwen/Qwen2.5-Omni-7B", VLLMOmniVersion: v}); res.Release != v {
			t.Errorf("Qwen2.5-Omni on %s: release %s", v, res.Release)
		}
	}
}

// A stage_args base's keys that no release reads are translated: the value
// moves to the key the runtime reads, its comments with it; where the stage
// already sets that key (not to null) it wins; each move is a warning.
func TestTranslateIgnoredKeys(t *testing.T) {
	base := strings.Replace(strings.Replace(readLocal(t, legacyQwen3), "      max_batch_size: 1\n", "      # sixteen at once\n      max_batch_size: 1\n", 1),
		"    custom_process_input_func: vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker\n",
		"    custom_process_input_func: null\n    sync_process_input_func: vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker_token_only\n", 1)
	if !strings.Contains(base, "# sixteen at once") || !strings.Contains(base, "sync_process_input_func") {
		t.Fatal("the fixture did not take the edits")
	}
	res, ds := Plan(Spec{Model: seedModel, BaseConfig: base})
	if res == nil {
		t.Fatal(describeDiags(ds))
	}
	st := stageList(t, config(t, res.ConfigYAML))
	if got := st[2]["custom_process_input_func"]; got != processorPrefix+"thinker2talker" || has(st[2], "sync_process_input_func") {
		t.Errorf("talker processor = %v (a null custom_process_input_func must not win)", got)
	}
	if !strings.Contains(res.ConfigYAML, "# sixteen at once\n      max_num_seqs: 16") {
		t.Errorf("the comment on max_batch_size did not move with it:\n%s", res.ConfigYAML)
	}
	if n := len(codesOf(ds.Warnings(), "ignored_key_translated")); n < 2 {
		t.Errorf("%d translation warnings, want one per moved key: %v", n, ds.Codes())
	}
	// The preset's own keys are documented, not warned about.
	if _, ds := Plan(Spec{Model: seedModel}); len(ds.Warnings()) > 0 {
		t.Errorf("the default plan warns: %v", ds)
	}
}

// With vllm_omni_version unset, a resource keeps the release it planned
// for while that release still runs the plan, as it keeps its ports; one
// that no longer does gives way to the default.
func TestPreviousReleaseKept(t *testing.T) {
	_, dropped := releases.Beyond()
	for _, tc := range []struct{ model, prev, want string }{
		{seedModel, "0.22.0", "0.22.0"},
		{seedModel, "0.20.0", "0.20.0"},
		{seedModel, "0.23.0rc1", "0.23.0rc1"},
		{seedModel, "0.26.0rc1", "0.24.0"}, // its Qwen3-Omni input processors are gone
		{seedModel, "0.25.0rc1", "0.24.0"},
		{seedModel, "0.28.0", "0.24.0"},    // loads no stage_args
		{seedModel, "0.19.0rc1", "0.24.0"}, // a row this provider dropped
		{seedModel, dropped, "0.24.0"},     // a row a later provider knows
		{seedModel, "", "0.24.0"},
		{"Qwen/Qwen2.5-Omni-7B", "0.23.0rc1", "0.23.0rc1"},
		{"Qwen/Qwen2.5-Omni-7B", "0.24.0", "0.22.0"}, // its processors are gone there
		{"Qwen/Qwen2.5-Omni-7B", "", "0.22.0"},
	} {
		res := mustPlan(t, Spec{Model: tc.model, Previous: &Allocations{Release: tc.prev}})
		if res.Release != tc.want || res.Version != tc.want || res.Allocations.Release != tc.want {
			t.Errorf("%s, previous %q: release %s, version %s, kept %s; want %s", tc.model, tc.prev, res.Release, res.Version, res.Allocations.Release, tc.want)
		}
	}
	// Set, the version wins over the previous release.
	if res := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: "0.20", Previous: &Allocations{Release: "0.22.0"}}); res.Release != "0.20.0" || res.Version != "0.20" {
		t.Errorf("set version: release %s, version %s", res.Release, res.Version)
	}
}

// From 0.26.0rc1 the stage_args stage init reads some keys with no
// default: the plan writes each, on every stage that leaves it out, with
// the value the stage init assumed before (runtime {}, engine_input_source
// [], final_output false, final_output_type null, is_comprehension false),
// and keeps every value a stage sets. Releases before write none.
func TestRequiredStageKeys(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: "0.26.0rc1", BaseConfig: miniBase})
	st := stageList(t, config(t, res.ConfigYAML))
	if len(st) != 4 {
		t.Fatalf("%d stages, want 4", len(st))
	}
	keys := []string{"runtime", "engine_input_source", "final_output", "final_output_type", "is_comprehension"}
	for i, s := range st {
		for _, k := range keys {
			if !has(s, k) {
				t.Errorf("stage %d has no %s", i, k)
			}
		}
	}
	want := map[string]any{
		// Written where the stage left them out.
		"stage_args.0.engine_input_source": []any{},
		"stage_args.0.final_output_type":   nil,
		"stage_args.0.is_comprehension":    false,
		"stage_args.2.final_output":        false,
		"stage_args.2.final_output_type":   nil,
		"stage_args.2.is_comprehension":    false,
		// Kept where the stage (or the split) sets them.
		"stage_args.0.final_output":        false,
		"stage_args.1.engine_input_source": []any{0},
		"stage_args.1.final_output":        true,
		"stage_args.1.final_output_type":   "text",
		"stage_args.2.engine_input_source": []any{1},
		"stage_args.3.final_output":        true,
		"stage_args.3.final_output_type":   "audio",
		"stage_args.0.runtime.devices":     "0",
	}
	got := config(t, res.ConfigYAML)
	for path, w := range want {
		if g := digPath(got, path); !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v, want %#v", path, g, w)
		}
	}
	if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
		t.Errorf("planned config fails the checks: %v", errs)
	}
	// The release before reads them with defaults: nothing is added.
	res = mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: "0.25.0rc1", BaseConfig: miniBase})
	st = stageList(t, config(t, res.ConfigYAML))
	if has(st[0], "engine_input_source") || has(st[2], "final_output") || has(st[2], "final_output_type") || has(st[0], "is_comprehension") {
		t.Errorf("0.25.0rc1 writes the keys 0.26.0rc1 requires:\n%s", res.ConfigYAML)
	}
}

// Every key a release's row can require has a default writeRequiredKeys
// writes (it skips any other silently).
func TestRequiredKeysHaveDefaults(t *testing.T) {
	n := 0
	for _, r := range releases.Table {
		n += len(r.RequiredStageKeys.Names)
		for _, k := range r.RequiredStageKeys.Names {
			if _, ok := requiredKeyDefaults[k]; !ok {
				t.Errorf("vllm-omni %s requires %s, which has no default to write", r.Version, k)
			}
		}
	}
	if n == 0 {
		t.Error("no release requires a key: the test holds nothing")
	}
}
