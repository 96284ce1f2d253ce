package provider

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// Careless and hostile inputs by class, several per class, each rejected
// by the data source and the resource alike at the attribute it is about,
// with the fix (see badInput).
func hostileInputs() []badInput {
	negativeIDBase := strings.Replace(strings.Replace(goodBase, "stage_id: 0", "stage_id: -1", 1), "[0]", "[-1]", 1)
	return []badInput{
		// --- numbers Go cannot hold, typed and free-form ---
		{name: "gpu_memory_utilization 1e-400", body: []string{`prefill = { gpu_memory_utilization = 1e-400 }`},
			attr: `prefill.gpu_memory_utilization`, fix: `greater than 0 and at most 1, got: 1e-400`},
		{name: "gpu_memory_utilization 1e400", body: []string{`decode = { gpu_memory_utilization = 1e400 }`},
			attr: `decode.gpu_memory_utilization`, fix: `at most 1, got: 1e\+400`},
		{name: "gpu_memory_utilization a tiny fraction", body: []string{`decode = { gpu_memory_utilization = 1 / 1e330 }`},
			attr: `decode.gpu_memory_utilization`, fix: `greater than 0`},
		{name: "max_num_seqs 1e400", body: []string{`prefill = { max_num_seqs = 1e400 }`},
			attr: `prefill.max_num_seqs`, fix: `between 1 and 2147483647, got: 1e\+400`},
		{name: "split_stage 1e400", body: []string{`split_stage = 1e400`},
			attr: `split_stage`, fix: `between 0 and 2147483647`},
		{name: "head_wait_seconds 1e400", body: []string{`systemd = { head_wait_seconds = 1e400 }`},
			attr: `systemd.head_wait_seconds`, fix: `between 10 and 86400`},
		{name: "reserved port 1e-400", body: []string{`reserved_ports = [1e-400]`},
			attr: `reserved_ports`, fix: `whole number, got: 1e-400`},
		{name: "engine_args number too large", body: []string{`prefill = { engine_args = { max_model_len = 1e400 } }`},
			attr: `prefill.engine_args.max_model_len`, fix: `too large for a 64-bit float`},
		{name: "engine_args number too small", body: []string{`decode = { engine_args = { swap_space = -1e-400 } }`},
			attr: `decode.engine_args.swap_space`, fix: `too small for a 64-bit float`},
		{name: "two numbers too large in one nested object", body: []string{`prefill = { engine_args = { x = { a = 1e400, b = -1e400 } } }`},
			attr: `prefill.engine_args.x.a`, fix: `too large for a 64-bit float.*prefill.engine_args.x.b.*too large`},
		{name: "extra_config number too large", body: []string{`connector = { extra_config = { timeout = 1e999 } }`},
			attr: `connector.extra_config.timeout`, fix: `too large for a 64-bit float`},
		{name: "stage_overrides number too large", body: []string{`stage_overrides = { talker = { max_num_seqs = 1e400 } }`},
			attr: `stage_overrides.talker.max_num_seqs`, fix: `too large for a 64-bit float`},
		{name: "stage_overrides max_num_seqs beyond the typed bound", body: []string{`stage_overrides = { talker = { max_num_seqs = 1e15 } }`},
			attr: `stage_overrides.talker.max_num_seqs`, fix: `at most 2147483647`, code: "stage_overrides_range"},
		{name: "stage_overrides device 2^40", body: []string{`stage_overrides = { code2wav = { devices = [pow(2, 40)] } }`},
			attr: `stage_overrides.code2wav.devices\[0\]`, fix: `at most 2147483647`, code: "stage_overrides_range"},
		{name: "stage_overrides num_replicas 1e12", body: []string{`stage_overrides = { talker = { num_replicas = 1e12 } }`},
			attr: `stage_overrides.talker.num_replicas`, fix: `at most 2147483647`, code: "stage_overrides_range"},
		{name: "stage_overrides memory 1e-400", body: []string{`stage_overrides = { talker = { gpu_memory_utilization = 1e-400 } }`},
			attr: `stage_overrides.talker.gpu_memory_utilization`, fix: `too small for a 64-bit float`},

		// --- parallelism arithmetic ---
		{name: "tensor × pipeline overflows", body: []string{
			`prefill = { tensor_parallel_size = 2147483647, engine_args = { pipeline_parallel_size = 2147483647 } }`,
			`decode = { tensor_parallel_size = 2147483647, engine_args = { pipeline_parallel_size = 2147483647 } }`},
			attr: `prefill.tensor_parallel_size`, fix: `needs more than 1024 devices`, code: "world_size_range"},
		{name: "pipeline parallel alone beyond a host", body: []string{`prefill = { engine_args = { pipeline_parallel_size = 4096 } }`},
			attr: `prefill.engine_args`, fix: `needs more than 1024 devices`, code: "world_size_range"},
		{name: "pipeline parallel fractional", body: []string{`decode = { engine_args = { pipeline_parallel_size = 1.5 } }`},
			attr: `decode.engine_args.pipeline_parallel_size`, fix: `set a whole number`, code: "pipeline_parallel_size_range"},
		{name: "data parallel zero on a stage", body: []string{`stage_overrides = { talker = { engine_args = { data_parallel_size = 0 } } }`},
			attr: `stage_overrides.talker.engine_args.data_parallel_size`, fix: `set a whole number`, code: "data_parallel_size_range"},
		{name: "pipeline parallel beyond gpus", body: []string{`gpus = 4`, `prefill = { engine_args = { pipeline_parallel_size = 2 } }`, `decode = { engine_args = { pipeline_parallel_size = 2 } }`},
			attr: `gpus`, fix: `Raise gpus`, code: "gpus_exceeded"},
		{name: "devices fewer than tensor × pipeline", body: []string{`prefill = { devices = [0, 1], tensor_parallel_size = 2, engine_args = { pipeline_parallel_size = 2 } }`, `decode = { tensor_parallel_size = 2, engine_args = { pipeline_parallel_size = 2 } }`},
			attr: `prefill.devices`, fix: `needs 4 device\(s\)`, code: "devices_world_size"},
		{name: "replicas × data parallel overflow", body: []string{`stage_overrides = { talker = { num_replicas = 65536, engine_args = { data_parallel_size = 65536 } } }`},
			attr: `stage_overrides.talker`, fix: `needs more than 1024 devices`, code: "world_size_range"},

		// --- stage identity ---
		{name: "negative stage id", body: []string{baseConfig(negativeIDBase)},
			attr: `base_config`, fix: `has stage_id -1.*renumber the stages from 0`, code: "stage_id_negative"},
		{name: "stage id fractional", body: []string{baseConfig(strings.Replace(goodBase, "stage_id: 0", "stage_id: 1.5", 1))},
			attr: `base_config`, fix: `stage_id is the number 1.5, where vllm-omni reads a whole number`, code: "yaml_value_type"},
		{name: "stage id quoted", body: []string{baseConfig(strings.Replace(goodBase, "stage_id: 0", `stage_id: "0"`, 1))},
			attr: `base_config`, fix: `stage_id is the text "0" \(it is quoted\).*write 0 without quotes`, code: "yaml_value_type"},
		{name: "empty stage_args", body: []string{baseConfig("stage_args: []")},
			attr: `base_config`, fix: `its stage_args list is empty`, code: "base_no_stages"},
		{name: "empty stages", body: []string{baseConfig("stages: []")},
			attr: `base_config`, fix: `its stages list is empty`, code: "base_no_stages"},
		{name: "preset for another model", body: []string{`model = "Qwen/Qwen2.5-Omni-7B"`, `preset = "qwen3_omni_moe"`},
			attr: `preset`, fix: `set preset = "qwen2_5_omni"`, code: "model_arch_mismatch"},
		{name: "preset for another model, the other way", body: []string{`preset = "qwen2_5_omni"`},
			attr: `preset`, fix: `set preset = "qwen3_omni_moe"`, code: "model_arch_mismatch"},
		{name: "base config for another model", body: []string{`model = "Qwen/Qwen2.5-Omni-3B"`, baseConfig(strings.Replace(goodBase, "      model_stage: thinker\n", "      model_stage: thinker\n      model_arch: Qwen3OmniMoeForConditionalGeneration\n", 1))},
			attr: `base_config`, fix: `loads model_arch Qwen3OmniMoeForConditionalGeneration`, code: "model_arch_mismatch"},
	}
}

func TestAccPDPipeline_HostileInputs(t *testing.T) {
	runBadInputs(t, hostileInputs())
}

// A local path's name picks a preset only when preset is unset: given a
// preset, the path is not judged (its directory may hold any weights), so
// the Qwen3-Omni pipeline plans on a path named for Qwen2.5-Omni, and
// preset reads back as given, at plan time, for both entities.
func TestAccPDPipeline_PresetWithLocalPath(t *testing.T) {
	body := `
  model  = "/models/qwen2.5-omni-7b"
  preset = "qwen3_omni_moe"
`
	stages := knownvalue.ListExact([]knownvalue.Check{
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"role": knownvalue.StringExact("prefill"), "model_stage": knownvalue.StringExact("thinker")}),
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"role": knownvalue.StringExact("decode"), "model_stage": knownvalue.StringExact("thinker")}),
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"model_stage": knownvalue.StringExact("talker")}),
		knownvalue.ObjectPartial(map[string]knownvalue.Check{"model_stage": knownvalue.StringExact("code2wav")}),
	})
	accTest(t, resource.TestStep{
		Config: `resource "omni_pd_pipeline" "test" {` + body + `}
data "omni_pd_pipeline" "test" {` + body + `}`,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("preset"), knownvalue.StringExact("qwen3_omni_moe")),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages"), stages),
			// The preset's own architecture, not Qwen2.5-Omni's.
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`model_arch: Qwen3OmniMoeForConditionalGeneration\n`))),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("serve_command"), knownvalue.StringRegexp(regexp.MustCompile(`^vllm serve /models/qwen2\.5-omni-7b --omni `))),
		}},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("preset"), knownvalue.StringExact("qwen3_omni_moe")),
			statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("stages"), stages),
		},
	})
}

// One pass across layers: a schema error (here a fraction where a whole
// number goes) does not hide what the engine finds on other attributes,
// for the data source and the resource alike.
func TestAccPDPipeline_SchemaErrorsDoNotHideEngineErrors(t *testing.T) {
	cases := []struct {
		name   string
		body   []string
		errors []string // each must appear, for both entities
	}{
		{"gpus fractional beside a TP mismatch",
			[]string{`gpus = 4.5`, `decode = { tensor_parallel_size = 2 }`},
			[]string{`gpus must be a whole number, got: 4.5`, `\[tp_mismatch\]`}},
		{"bad port range beside an unknown connector",
			[]string{`port_range = { first = 30000, last = 29000 }`, `connector = { name = "FooConnector" }`},
			[]string{`swap them or raise last`, `\[connector_unknown\]`}},
		{"a bad device beside a bad host",
			[]string{`prefill = { devices = [-1], host = "10.0.0.1;reboot" }`, `decode = { host = "10.0.0.2" }`},
			[]string{`prefill.devices\[0\] value must be at least 0`, `\[host_invalid\]`}},
		{"an empty connector name beside an oversubscribed GPU",
			[]string{`connector = { name = "" }`, `stage_overrides = { talker = { gpu_memory_utilization = 0.6 }, code2wav = { gpu_memory_utilization = 0.5 } }`},
			[]string{`connector.name string length must be at least 1`, `\[gpu_memory_oversubscribed\]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := badInput{body: c.body}.config()
			var steps []resource.TestStep
			for _, e := range c.errors {
				steps = append(steps, resource.TestStep{Config: cfg, ExpectError: regexp.MustCompile(`(?s)` + loose(e) + `.*` + loose(e))})
			}
			accTest(t, steps...)
		})
	}
}
