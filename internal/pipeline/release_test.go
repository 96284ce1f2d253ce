package pipeline

import (
	"strings"
	"testing"
)

// chooseRelease refuses a vllm_omni_version, format or pipeline no release
// runs the plan with.
func TestReleaseDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"stages base with no known topology written as stage_args", func(t *testing.T) Spec {
			return Spec{Model: "acme/omni-7b", Format: "stage_args", BaseConfig: readLocal(t, stagesQwen3), SplitStage: ptr(0)}
		}, "format_conversion_unsupported", "format"},
		{"stages output with no pipeline to name", func(*testing.T) Spec {
			return Spec{Model: "acme/omni-7b", Format: "stages", BaseConfig: miniBase}
		}, "release_none", "vllm_omni_version"},
		{"stages output on a release with no PD pipeline", func(*testing.T) Spec {
			return Spec{Model: m, Format: "stages", VLLMOmniVersion: "0.28.0"}
		}, "release_no_pd", "vllm_omni_version"},
		{"pipeline with stage_args output", func(*testing.T) Spec {
			return Spec{Model: m, Format: "stage_args", Pipeline: "qwen3_omni_moe_pd"}
		}, "pipeline_unused", "pipeline"},
		{"malformed version", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "v0.24"} }, "release_malformed", "vllm_omni_version"},
		{"version before PD", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.14.0"} }, "release_before_pd", "vllm_omni_version"},
		{"version newer than the table", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.99"} }, "release_unknown_newer", "vllm_omni_version"},
		{"version not a known release", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.22.7"} }, "release_unknown", "vllm_omni_version"},
		{"stage_args on a release that refuses it", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.28"} }, "release_no_pd", "vllm_omni_version"},
		{"P2pNccl on a vLLM without it", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.24.0", Connector: ConnectorSpec{Name: "P2pNcclConnector", ExtraConfig: map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}}}
		}, "release_no_pd", "vllm_omni_version"},
	})
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
	for _, tc := range []struct{ prev, want string }{
		{"0.22.0", "0.22.0"},
		{"0.26.0rc1", "0.26.0rc1"},
		{"0.28.0", "0.24.0"}, // loads no stage_args
		{"0.99.0", "0.24.0"}, // a row a later provider dropped
		{"", "0.24.0"},
	} {
		res := mustPlan(t, Spec{Model: seedModel, Previous: &Allocations{Release: tc.prev}})
		if res.Release != tc.want || res.Version != tc.want || res.Allocations.Release != tc.want {
			t.Errorf("previous %q: release %s, version %s, kept %s; want %s", tc.prev, res.Release, res.Version, res.Allocations.Release, tc.want)
		}
	}
	// Set, the version wins over the previous release.
	if res := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: "0.20", Previous: &Allocations{Release: "0.22.0"}}); res.Release != "0.20.0" || res.Version != "0.20" {
		t.Errorf("set version: release %s, version %s", res.Release, res.Version)
	}
}
