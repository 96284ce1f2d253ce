package provider

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// Base configs read as vllm-omni reads them (OmegaConf.load, PyYAML's
// YAML 1.1 rules): each value the planner cannot plan with as vllm-omni
// reads it is an error at base_config, with its line and the fix, through
// Terraform for the data source and the resource alike. The cases follow
// the catalogue in bad_inputs_test.go, with several inputs per class.

// goodBaseWith replaces one fragment of goodBase, failing loudly when the
// fragment is not there.
func goodBaseWith(t *testing.T, old, replacement string) string {
	t.Helper()
	if !strings.Contains(goodBase, old) {
		t.Fatalf("goodBase has no %q", old)
	}
	return strings.Replace(goodBase, old, replacement, 1)
}

// heredocYAML is baseConfig for YAML that holds `${`, which HCL would read
// as its own interpolation: `$${` is HCL for a literal `${`.
func heredocYAML(yamlText string) string {
	return baseConfig(strings.ReplaceAll(yamlText, "${", "$${"))
}

func badYAMLInputs(t *testing.T) []badInput {
	thinker := "      model_stage: thinker\n"
	talker := "      model_stage: talker\n"
	withThinker := func(line string) string { return goodBaseWith(t, thinker, thinker+"      "+line+"\n") }
	withTalker := func(line string) string { return goodBaseWith(t, talker, talker+"      "+line+"\n") }
	stage1 := "  - stage_id: 1\n"
	withStage1 := func(line string) string { return goodBaseWith(t, stage1, stage1+"    "+line+"\n") }
	return []badInput{
		// --- numbers, booleans and text of the wrong type ---
		{name: "tp quoted", body: []string{baseConfig(withThinker(`tensor_parallel_size: "2"`))},
			attr: `base_config`, fix: `line 6: stage_args\[0\].engine_args.tensor_parallel_size is the text "2" .* write 2 without quotes`, code: "yaml_value_type"},
		{name: "tp single-quoted on another stage", body: []string{baseConfig(withTalker(`tensor_parallel_size: '2'`))},
			attr: `base_config`, fix: `line 11: stage_args\[1\].engine_args.tensor_parallel_size .* write 2 without quotes`, code: "yaml_value_type"},
		{name: "tp 0o2", body: []string{baseConfig(withThinker(`tensor_parallel_size: 0o2`))},
			attr: `base_config`, fix: `line 6: .* YAML 1.2 reads it as 2, but vllm-omni's loader follows YAML 1.1, .* write 2`, code: "yaml_value_type"},
		{name: "max_num_seqs yes", body: []string{baseConfig(withThinker(`max_num_seqs: yes`))},
			attr: `base_config`, fix: `line 6: .*max_num_seqs is the boolean true .* write one, such as 2`, code: "yaml_value_type"},
		{name: "stage_id quoted", body: []string{baseConfig(goodBaseWith(t, stage1, "  - stage_id: \"1\"\n"))},
			attr: `base_config`, fix: `line 7: stage_args\[1\].stage_id is the text "1" .* write 1 without quotes`, code: "yaml_value_type"},
		{name: "final_output quoted", body: []string{baseConfig(goodBaseWith(t, "final_output: true", `final_output: "true"`))},
			attr: `base_config`, fix: `line 13: .*final_output is the text "true" .* write true without quotes`, code: "yaml_value_type"},
		{name: "gpu_memory_utilization quoted", body: []string{baseConfig(withThinker(`gpu_memory_utilization: "0.9"`))},
			attr: `base_config`, fix: `line 6: .* write 0.9 without quotes`, code: "yaml_value_type"},
		{name: "model_stage no", body: []string{baseConfig(goodBaseWith(t, talker, "      model_stage: no\n"))},
			attr: `base_config`, fix: `line 10: .*model_stage is the boolean false, not text .* write it in quotes, "no"`, code: "yaml_value_type"},

		// --- .nan and .inf where a number is meant ---
		{name: "gpu_memory_utilization nan", body: []string{baseConfig(withThinker(`gpu_memory_utilization: .nan`))},
			attr: `base_config`, fix: `line 6: .*gpu_memory_utilization is .nan, which is not a finite number: write a number such as 0.9`, code: "yaml_value_not_finite"},
		{name: "gpu_memory_utilization inf", body: []string{baseConfig(withTalker(`gpu_memory_utilization: .inf`))},
			attr: `base_config`, fix: `line 11: .* not a finite number`, code: "yaml_value_not_finite"},
		{name: "tp -inf", body: []string{baseConfig(withThinker(`tensor_parallel_size: -.inf`))},
			attr: `base_config`, fix: `line 6: .* which is not a number: write a whole number`, code: "yaml_value_not_finite"},

		// --- known keys of the wrong shape ---
		{name: "top-level runtime a list", body: []string{baseConfig(goodBase + "runtime: [enabled]\n")},
			attr: `base_config`, fix: `line 15: runtime is a list, where vllm-omni reads a mapping: write it as a mapping`, code: "yaml_shape"},
		{name: "engine_args a string", body: []string{baseConfig(goodBaseWith(t, "    engine_args:\n      model_stage: talker\n      worker_type: ar\n", "    engine_args: talker\n"))},
			attr: `base_config`, fix: `line 9: stage_args\[1\].engine_args is the text "talker", where vllm-omni reads a mapping`, code: "yaml_shape"},
		{name: "stage runtime a list", body: []string{baseConfig(withStage1("runtime: [0, 1]"))},
			attr: `base_config`, fix: `line 8: stage_args\[1\].runtime is a list`, code: "yaml_shape"},
		{name: "edges a mapping", body: []string{baseConfig(goodBase + "runtime:\n  edges: {from: 0, to: 1}\n")},
			attr: `base_config`, fix: `line 16: runtime.edges is a mapping, where vllm-omni reads a list: write it as a list`, code: "yaml_shape"},

		// --- interpolations where the planner reads or rewrites ---
		{name: "tp interpolated", body: []string{heredocYAML(withThinker(`tensor_parallel_size: ${tp}`))},
			attr: `base_config`, fix: `line 6: .*tensor_parallel_size is "\$\{tp\}", an OmegaConf interpolation .* write the value out`, code: "yaml_interpolation"},
		{name: "devices interpolated", body: []string{heredocYAML(withStage1(`runtime: {devices: "${oc.env:GPUS}"}`))},
			attr: `base_config`, fix: `line 8: stage_args\[1\].runtime.devices .* OmegaConf interpolation`, code: "yaml_interpolation"},
		{name: "model_stage interpolated", body: []string{heredocYAML(goodBaseWith(t, talker, "      model_stage: ${stage}\n"))},
			attr: `base_config`, fix: `line 10: .*model_stage .* OmegaConf interpolation`, code: "yaml_interpolation"},

		// --- what vllm-omni's loader cannot read at all ---
		{name: "python object tag", body: []string{baseConfig(withThinker(`hf_overrides: !!python/object/apply:os.system ["reboot"]`))},
			attr: `base_config`, fix: `line 6, column 21: the tag !!python/object/apply:os.system asks for a Python object;.*write the value out`, code: "base_config_invalid"},
		{name: "binary tag", body: []string{baseConfig(withThinker(`tokenizer: !!binary aGk=`))},
			attr: `base_config`, fix: `line 6, .*tag !!binary is not supported .* remove it`, code: "base_config_invalid"},
		{name: "merge key of a scalar", body: []string{baseConfig(withStage1("<<: defaults"))},
			attr: `base_config`, fix: `line 8, .*the merge key .<<. takes a mapping or a list of mappings`, code: "base_config_invalid"},
		{name: "bare equals sign", body: []string{baseConfig(withThinker("quantization: ="))},
			attr: `base_config`, fix: `line 6, .*write "=" in quotes`, code: "base_config_invalid"},
		{name: "keys yes and on", body: []string{baseConfig(withStage1("default_sampling_params: {yes: 1, on: 2}"))},
			attr: `base_config`, fix: `line 8, .*keys "yes" \(line 8\) and "on" are one key .* keep one`, code: "base_config_invalid"},
		{name: "interpolation never closed", body: []string{heredocYAML(withThinker(`served_model_name: "${name"`))},
			attr: `base_config`, fix: `line 6, .*never closed,.*close it`, code: "base_config_invalid"},
		{name: "base-60 number in a flow list", body: []string{baseConfig(goodBaseWith(t, "engine_input_source: [0]", "engine_input_source: [0, 1:30]"))},
			attr: `base_config`, fix: `line 12, .*1:30 is a YAML 1.1 base-60 number,.*write 90`, code: "base_config_invalid"},
	}
}

func TestAccPDPipeline_BadYAMLInputs(t *testing.T) {
	cases := badYAMLInputs(t)
	perCode := map[string]int{}
	for _, c := range cases {
		perCode[c.code]++
	}
	for _, code := range []string{"yaml_value_type", "yaml_value_not_finite", "yaml_shape", "yaml_interpolation", "base_config_invalid"} {
		if perCode[code] < 3 {
			t.Fatalf("%d cases of %s; keep several per class", perCode[code], code)
		}
	}
	runBadInputs(t, cases)
}

// mergedBase shares each stage's topology through an anchor; the
// thinker's and the talker's final_output are YAML 1.1's yes and on.
const mergedBase = `x-stage: &llm
  stage_type: llm
  engine_args: &engine
    model_stage: thinker
    model_arch: Qwen3OmniMoeForConditionalGeneration
    worker_type: ar
stage_args:
  - <<: *llm
    stage_id: 0
  - <<: *llm
    stage_id: 1
    engine_args:
      <<: *engine
      model_stage: talker
      tensor_parallel_size: 0x2
    engine_input_source: [0]  # the thinker's output
    final_output: on
    final_output_type: audio
`

// A base config that uses merge keys, YAML 1.1 booleans and a hex number
// is planned as vllm-omni reads it: the planned config keeps every merged
// key on every stage (engine_args set on a merged stage once hid them), the
// talker is the final stage with TP 2, and the flow list keeps its comment.
func TestAccPDPipeline_BaseConfigReadAsVLLMOmni(t *testing.T) {
	const addr = "data.omni_pd_pipeline.test"
	stage := func(id int64, role, modelStage string, tp int64) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"stage_id": knownvalue.Int64Exact(id), "role": knownvalue.StringExact(role),
			"model_stage": knownvalue.StringExact(modelStage), "tensor_parallel_size": knownvalue.Int64Exact(tp),
		})
	}
	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + baseConfig(mergedBase) + `
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("stages"), knownvalue.ListExact([]knownvalue.Check{
				stage(0, "prefill", "thinker", 1), stage(1, "decode", "thinker", 1), stage(2, "stage", "talker", 2),
			})),
			// Each of the three stages and the anchor's definition.
			configMatches(`(?s)(model_arch: Qwen3OmniMoeForConditionalGeneration\n\s+worker_type: ar.*){4}`),
			configMatches(`(?s)kv_role: "kv_producer".*kv_role: "kv_consumer"`),
			configMatches(`engine_input_source: \[1\] # the thinker's output\n`),
			configMatches(`final_output: on\n`),
		},
	})
}

// configMatches checks the data source's config_yaml against a pattern.
func configMatches(pattern string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue("data.omni_pd_pipeline.test", tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(pattern)))
}

// What the provider writes into a base config reads back as the user wrote
// it: engine_args keys YAML 1.1 would read as booleans, numbers or a merge
// are quoted, and an interpolation the planner does not read is kept.
func TestAccPDPipeline_BaseConfigKeysAndInterpolationsKept(t *testing.T) {
	base := goodBaseWith(t, "    final_output_type: audio\n", "    final_output_type: audio\n    default_sampling_params: {stop: \"${stops}\"}\n")
	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + heredocYAML(base) + `
  prefill = { engine_args = { "yes" = 1, "1:30" = "x", "<<" = 2, "on" = true, "null" = "n" } }
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			configMatches(`\n\s+"yes": 1\n`),
			configMatches(`\n\s+"1:30": x\n`),
			configMatches(`\n\s+"<<": 2\n`),
			configMatches(`\n\s+"on": true\n`),
			configMatches(`\n\s+"null": "n"\n`),
			configMatches(`default_sampling_params: \{stop: "\$\{stops\}"\}`),
		},
	})
}
