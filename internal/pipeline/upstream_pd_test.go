package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Upstream's configs planned and checked end to end: a corpus test, kept
// here rather than beside one step's file.

// readUpstream reads a real vllm-omni config from the shared folder beside
// the repository, skipping when it is missing.
func readUpstream(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedConfigs, rel))
	if err != nil {
		t.Skipf("upstream test data not available: %v", err)
	}
	return string(b)
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
	want := config(t, readUpstream(t, "deploy/hunyuan_image_3_moe_pd@c9899cfe.yaml"))
	// No release registers hunyuan_image3_pd (open PR #7217): the plan
	// names it as the user's own registration, on a release they name.
	res, ds := Plan(Spec{Model: "tencent/HunyuanImage-3.0-Instruct", BaseConfig: base, Pipeline: "hunyuan_image3_pd", VLLMOmniVersion: "0.32.0"})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if res.Format != "stages" {
		t.Fatalf("format = %s, want the base config's stages dialect", res.Format)
	}
	got := config(t, res.ConfigYAML)
	if stages, _ := dig(got, "stages").([]any); len(stages) != 3 {
		t.Fatalf("%d stages, want 3", len(stages))
	}
	facts := []fact{{"pipeline", []any{"pipeline"}}}
	for i := 0; i < 2; i++ {
		for _, k := range []string{"kv_role", "kv_rank", "kv_parallel_size"} {
			facts = append(facts, fact{"kv", []any{"stages", i, "kv_transfer_config", k}})
		}
	}
	// Upstream's MooncakeConnector fails the handoff gate; the plan's
	// NixlConnector listens where upstream's bootstrap servers do.
	compareConnector(t, got, want, "stages", []any{"kv_transfer_config"}, []any{"env"})
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
	want := config(t, readUpstream(t, "legacy_stage_configs/qwen3_omni_moe_pd_separation@b9f6fd40.yaml"))
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
	got := config(t, res.ConfigYAML)
	if stages, _ := dig(got, "stage_args").([]any); len(stages) != 4 {
		t.Fatalf("%d stages, want 4", len(stages))
	}
	facts := stageFacts("stage_args", 4,
		[]any{"stage_id"}, []any{"is_prefill_only"}, []any{"is_decode_only"},
		[]any{"runtime", "devices"},
		[]any{"engine_args", "model_stage"}, []any{"engine_args", "tensor_parallel_size"},
		[]any{"engine_args", "gpu_memory_utilization"},
		[]any{"engine_args", "kv_transfer_config", "kv_role"}, []any{"engine_args", "kv_transfer_config", "kv_rank"},
		[]any{"engine_args", "kv_transfer_config", "kv_parallel_size"},
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
	compareConnector(t, got, want, "stage_args", []any{"engine_args", "kv_transfer_config"}, []any{"runtime", "env"})
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

// compareConnector holds the PD pair (stages 0 and 1 of list) to
// upstream's but for the connector: upstream names MooncakeConnector, which
// fails vllm-omni's KV handoff gate (it returns no remote_request_id), and
// the plan NixlConnector, with each side's side-channel port (in its
// environment) the port upstream gives that side's Mooncake bootstrap
// server, and no Mooncake setting left behind.
func compareConnector(t *testing.T, got, want map[string]any, list string, kvPath, envPath []any) {
	t.Helper()
	at := func(i int, path ...any) []any { return append(append([]any{list, i}, kvPath...), path...) }
	for i := 0; i < 2; i++ {
		if w := dig(want, at(i, "kv_connector")...); w != "MooncakeConnector" {
			t.Errorf("stage %d: upstream's connector is %v; this test expects upstream's MooncakeConnector", i, w)
		}
		if g := dig(got, at(i, "kv_connector")...); g != "NixlConnector" {
			t.Errorf("stage %d: planned connector %v, want NixlConnector", i, g)
		}
		if g := dig(got, at(i, "kv_connector_extra_config")...); g != nil {
			t.Errorf("stage %d: planned kv_connector_extra_config %v, want none", i, g)
		}
		env := append(append([]any{list, i}, envPath...), "VLLM_NIXL_SIDE_CHANNEL_PORT")
		bootstrap := dig(want, at(i, "kv_connector_extra_config", "mooncake_bootstrap_port")...)
		if g := dig(got, env...); bootstrap == nil || g != fmt.Sprint(bootstrap) {
			t.Errorf("stage %d: side channel %v, want upstream's bootstrap port %v", i, g, bootstrap)
		}
		if g := dig(got, append(append([]any{list, i}, envPath...), "VLLM_MOONCAKE_BOOTSTRAP_PORT")...); g != nil {
			t.Errorf("stage %d: VLLM_MOONCAKE_BOOTSTRAP_PORT %v left in the plan", i, g)
		}
	}
}
