package pipeline

import (
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
