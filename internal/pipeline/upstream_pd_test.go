package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// upstreamDir holds real vllm-omni configs, beside the repository.
const upstreamDir = "../../../shared/testdata/vllm-omni"

func readUpstream(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(upstreamDir, rel))
	if err != nil {
		t.Skipf("upstream test data not available: %v", err)
	}
	return string(b)
}

func decodeYAML(t *testing.T, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return m
}

// fact is one value the upstream PD config and the planned one must share.
type fact struct {
	name string
	path []any
}

func compareFacts(t *testing.T, got, want map[string]any, facts []fact) {
	t.Helper()
	for _, f := range facts {
		g, w := dig(got, f.path...), dig(want, f.path...)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s %v: planned %#v, upstream %#v", f.name, f.path, g, w)
		}
	}
}

func stageFacts(list string, n int, keys ...[]any) []fact {
	var out []fact
	for i := 0; i < n; i++ {
		for _, k := range keys {
			out = append(out, fact{name: "stage", path: append([]any{list, i}, k...)})
		}
	}
	return out
}

// HunyuanImage-3.0's PD deploy upstream is the split of its base deploy:
// the provider must reach the same topology, placement and KV wiring.
func TestUpstreamPD_HunyuanImage3(t *testing.T) {
	base := readUpstream(t, "deploy/hunyuan_image_3_moe@7bf72476.yaml")
	want := decodeYAML(t, readUpstream(t, "deploy/hunyuan_image_3_moe_pd@c9899cfe.yaml"))
	// No release registers hunyuan_image3_pd (open PR #7217): the plan
	// names it as the user's own registration, on a release they name.
	res, ds := Plan(Spec{Model: "tencent/HunyuanImage-3.0-Instruct", BaseConfig: base, Pipeline: "hunyuan_image3_pd", VLLMOmniVersion: "0.32.0"})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if res.Format != "stages" {
		t.Fatalf("format = %s, want the base config's stages dialect", res.Format)
	}
	got := decodeYAML(t, res.ConfigYAML)
	if stages, _ := dig(got, "stages").([]any); len(stages) != 3 {
		t.Fatalf("%d stages, want 3", len(stages))
	}
	facts := []fact{{"pipeline", []any{"pipeline"}}}
	for i := 0; i < 2; i++ {
		for _, k := range []string{"kv_connector", "kv_role", "kv_rank", "kv_parallel_size"} {
			facts = append(facts, fact{"kv", []any{"stages", i, "kv_transfer_config", k}})
		}
		facts = append(facts, fact{"bootstrap", []any{"stages", i, "kv_transfer_config", "kv_connector_extra_config", "mooncake_bootstrap_port"}})
	}
	facts = append(facts, stageFacts("stages", 3,
		[]any{"stage_id"}, []any{"devices"}, []any{"tensor_parallel_size"},
		[]any{"input_connectors"}, []any{"output_connectors"}, []any{"parallel_config"})...)
	for i := 0; i < 2; i++ {
		facts = append(facts, fact{"edge", []any{"edges", i}})
	}
	compareFacts(t, got, want, facts)
}

// The legacy Qwen3-Omni PD config upstream is the split of the legacy
// Qwen3-Omni config with the memory shares the recipe uses.
func TestUpstreamPD_Qwen3OmniLegacy(t *testing.T) {
	base := readUpstream(t, "legacy_stage_configs/qwen3_omni_moe@617fe14f.yaml")
	want := decodeYAML(t, readUpstream(t, "legacy_stage_configs/qwen3_omni_moe_pd_separation@b9f6fd40.yaml"))
	one, thinkerMem := 1, 0.9
	res, ds := Plan(Spec{
		Model:          "Qwen/Qwen3-Omni-30B-A3B-Instruct",
		BaseConfig:     base,
		Prefill:        RoleSpec{TensorParallelSize: &one, GPUMemoryUtilization: &thinkerMem},
		Decode:         RoleSpec{TensorParallelSize: &one, GPUMemoryUtilization: &thinkerMem},
		StageOverrides: map[string]StageOverride{"talker": {GPUMemoryUtilization: ptr(0.6)}},
	})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	got := decodeYAML(t, res.ConfigYAML)
	if stages, _ := dig(got, "stage_args").([]any); len(stages) != 4 {
		t.Fatalf("%d stages, want 4", len(stages))
	}
	facts := stageFacts("stage_args", 4,
		[]any{"stage_id"}, []any{"is_prefill_only"}, []any{"is_decode_only"},
		[]any{"runtime", "devices"},
		[]any{"engine_args", "model_stage"}, []any{"engine_args", "tensor_parallel_size"},
		[]any{"engine_args", "gpu_memory_utilization"}, []any{"engine_args", "kv_transfer_config"},
		[]any{"engine_input_source"}, []any{"final_output"}, []any{"final_output_type"},
		[]any{"custom_process_input_func"}, []any{"default_sampling_params"})
	// The base has no runtime section; upstream's PD file adds a shared
	// memory connector and window sizes of its choosing, so only the graph
	// itself is compared.
	facts = append(facts, fact{"runtime", []any{"runtime", "enabled"}})
	for i := 0; i < 3; i++ {
		facts = append(facts, fact{"edge", []any{"runtime", "edges", i, "from"}}, fact{"edge", []any{"runtime", "edges", i, "to"}})
	}
	compareFacts(t, got, want, facts)
	// Upstream's file still writes runtime.max_batch_size, which no PD
	// release reads (PR #1851): the plan carries the same limits as
	// engine_args.max_num_seqs.
	for i := 0; i < 4; i++ {
		g, w := dig(got, "stage_args", i, "engine_args", "max_num_seqs"), dig(want, "stage_args", i, "runtime", "max_batch_size")
		if !reflect.DeepEqual(g, w) || dig(got, "stage_args", i, "runtime", "max_batch_size") != nil {
			t.Errorf("stage %d: max_num_seqs %v, want upstream's max_batch_size %v and no max_batch_size", i, g, w)
		}
	}
}

// Upstream's current Qwen3-Omni deploy (stages dialect) written as
// stage_args: the embedded preset supplies the topology the stages dialect
// leaves to vllm-omni's Python pipeline, and the result passes every check.
func TestConvertStagesToStageArgs(t *testing.T) {
	base := readUpstream(t, "deploy/qwen3_omni_moe@e2aa6aad.yaml")
	res, ds := Plan(Spec{Model: "Qwen/Qwen3-Omni-30B-A3B-Instruct", BaseConfig: base, Format: "stage_args"})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if !hasDiagCode(ds.Warnings(), "format_conversion_dropped_key") {
		t.Errorf("platforms dropped without a warning: %v", ds.Codes())
	}
	if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
		t.Errorf("converted config fails the checks: %v", errs)
	}
	got := decodeYAML(t, res.ConfigYAML)
	want := map[string]any{
		"stage_args.0.is_prefill_only":                        true,
		"stage_args.0.engine_args.model_stage":                "thinker",
		"stage_args.0.engine_args.kv_transfer_config.kv_role": "kv_producer",
		"stage_args.0.final_output":                           false,
		"stage_args.0.runtime.devices":                        "0",
		"stage_args.1.is_decode_only":                         true,
		"stage_args.1.engine_input_source":                    []any{0},
		"stage_args.1.final_output_type":                      "text",
		"stage_args.1.engine_args.kv_transfer_config.kv_role": "kv_consumer",
		"stage_args.2.engine_args.model_stage":                "talker",
		"stage_args.2.engine_input_source":                    []any{1},
		"stage_args.2.custom_process_input_func":              "vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker",
		"stage_args.2.input_connectors.from_stage_1":          "connector_of_shared_memory",
		"stage_args.2.engine_args.gpu_memory_utilization":     0.6,
		"stage_args.3.engine_args.worker_type":                "generation",
		"stage_args.3.engine_args.max_num_batched_tokens":     51200,
		"stage_args.3.final_output_type":                      "audio",
		"runtime.enabled":                                     true,
		"runtime.connectors.connector_of_shared_memory.name":  "SharedMemoryConnector",
		"runtime.edges.2.from":                                2,
		"runtime.edges.2.to":                                  3,
		"async_chunk":                                         true,
	}
	for path, w := range want {
		var steps []any
		for _, part := range strings.Split(path, ".") {
			if n, err := strconv.Atoi(part); err == nil {
				steps = append(steps, n)
			} else {
				steps = append(steps, part)
			}
		}
		if g := dig(got, steps...); !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v, want %#v", path, g, w)
		}
	}
}

// A stages pipeline no embedded preset describes cannot be written as
// stage_args: the error says so instead of writing a config without its
// topology.
func TestConvertStagesToStageArgs_NoTopology(t *testing.T) {
	base := readUpstream(t, "deploy/hunyuan_image_3_moe@7bf72476.yaml")
	_, ds := Plan(Spec{Model: "tencent/HunyuanImage-3.0-Instruct", BaseConfig: base, Format: "stage_args"})
	if !hasDiagCode(ds.Errors(), "format_conversion_unsupported") {
		t.Fatalf("want format_conversion_unsupported, got %v", ds.Codes())
	}
}

func hasDiagCode(ds Diagnostics, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}
