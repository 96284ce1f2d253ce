package pipeline

import (
	"reflect"
	"strings"
	"testing"
)

// Upstream's current Qwen3-Omni deploy (stages dialect) written as
// stage_args: the embedded preset supplies the topology the stages dialect
// leaves to vllm-omni's Python pipeline, and the result passes every check.
func TestConvertStagesToStageArgs(t *testing.T) {
	base := readUpstream(t, "deploy/qwen3_omni_moe@e2aa6aad.yaml")
	res, ds := Plan(Spec{Model: "Qwen/Qwen3-Omni-30B-A3B-Instruct", BaseConfig: base, Format: "stage_args"})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if !hasCodeAny(ds.Warnings(), "format_conversion_dropped_key") {
		t.Errorf("platforms dropped without a warning: %v", ds.Codes())
	}
	if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
		t.Errorf("converted config fails the checks: %v", errs)
	}
	got := config(t, res.ConfigYAML)
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
		if g := digPath(got, path); !reflect.DeepEqual(g, w) {
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
	if !hasCodeAny(ds.Errors(), "format_conversion_unsupported") {
		t.Fatalf("want format_conversion_unsupported, got %v", ds.Codes())
	}
}

// TestConvertStageArgsToStagesNamesWhatItDrops: every setting of a
// stage_args base that the stages output does not write is a warning at
// format naming the key and its line; the keys the conversion maps (edge
// defaults, enabled: true, topology) are not.
func TestConvertStageArgsToStagesNamesWhatItDrops(t *testing.T) {
	base := commentBase + "  mine: {a: 1}\n"
	base = strings.Replace(base, "      max_batch_size: 4\n", "      max_batch_size: 4\n      max_num_seqs: 2\n", 1)
	base = strings.Replace(base, "    engine_args: {model_stage: code2wav,", "    engine_args: {max_num_seqs: 3, model_stage: code2wav,", 1)
	res, ds := Plan(Spec{Model: seedModel, BaseConfig: base, Format: "stages", Pipeline: "qwen3_omni_moe_pd", VLLMOmniVersion: "0.28.0"})
	if res == nil {
		t.Fatalf("not planned:\n%s", describeDiags(ds))
	}
	var got []string
	for _, d := range codesOf(ds, "format_conversion_dropped_key") {
		if d.Path.String() != "format" || !strings.Contains(d.Detail, `Set format = "stage_args" to keep it`) {
			t.Errorf("warning %s", d)
		}
		got = append(got, strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(d.Detail, "the base config's "), ":", 2)[0], " is not written"))
	}
	want := []string{"stage_args[3].runtime.max_batch_size (line 20)", "stage_args[3].runtime.max_num_seqs (line 21)", "runtime.mine (line 31)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dropped keys %q, want %q\n%s", got, want, describeDiags(ds))
	}
}
