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

const (
	thinkingModel  = "Qwen/Qwen3-Omni-30B-A3B-Thinking"
	captionerModel = "Qwen/Qwen3-Omni-30B-A3B-Captioner"
)

// thinkerOnlyOutputs are what a Qwen3-Omni model without audio output
// plans with only model set: the thinker alone as prefill and decode,
// decode the final text output, on two GPUs and the default release.
func thinkerOnlyOutputs(model string) map[string]knownvalue.Check {
	i := knownvalue.Int64Exact
	ints := func(xs ...int64) knownvalue.Check {
		cs := make([]knownvalue.Check, len(xs))
		for k, x := range xs {
			cs[k] = i(x)
		}
		return knownvalue.ListExact(cs)
	}
	stage := func(id int64, role string, devices, inputs knownvalue.Check) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"stage_id": i(id), "role": knownvalue.StringExact(role), "model_stage": knownvalue.StringExact("thinker"),
			"devices": devices, "inputs": inputs,
		})
	}
	return map[string]knownvalue.Check{
		"preset": knownvalue.StringExact("qwen3_omni_moe_thinker_only"),
		"stages": knownvalue.ListExact([]knownvalue.Check{
			stage(0, "prefill", ints(0), ints()),
			stage(1, "decode", ints(1), ints(0)),
		}),
		"edges":             knownvalue.ListSizeExact(1),
		"gpu_count":         i(2),
		"vllm_omni_release": knownvalue.StringExact("0.24.0"),
		"config_yaml": knownvalue.StringRegexp(regexp.MustCompile(
			`(?s)^stage_args:\n  - stage_id: 0\n.*is_prefill_only: true.*- stage_id: 1\n.*is_decode_only: true.*engine_input_source: \[0\]\n    final_output: true\n    final_output_type: text\n`)),
		"serve_command": knownvalue.StringRegexp(regexp.MustCompile(`^vllm serve ` + regexp.QuoteMeta(model) + ` --omni --port 8091 `)),
		"launches": knownvalue.ListExact([]knownvalue.Check{knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"processes": knownvalue.ListSizeExact(2),
		})}),
	}
}

// A Qwen3-Omni model without audio output plans the thinker-only
// pipeline from its id alone, on the data source and the resource, known
// at plan time; preset reads back as the preset chosen, and the second
// plan after apply is empty. A local path to such a model is matched by
// its last element.
func TestAccPDPipeline_ThinkerOnlyModels(t *testing.T) {
	for _, model := range []string{thinkingModel, captionerModel, "/models/Qwen3-Omni-30B-A3B-Thinking"} {
		t.Run(model, func(t *testing.T) {
			const dsAddr = "data.omni_pd_pipeline.test"
			config := `data "omni_pd_pipeline" "test" {
  model = "` + model + `"
}
` + strings.Replace(pipelineResource(), seedModel, model, 1)
			var plan []plancheck.PlanCheck
			var state []statecheck.StateCheck
			for name, c := range thinkerOnlyOutputs(model) {
				plan = append(plan, plancheck.ExpectKnownValue(resAddr, tfjsonpath.New(name), c))
				state = append(state, statecheck.ExpectKnownValue(resAddr, tfjsonpath.New(name), c),
					statecheck.ExpectKnownValue(dsAddr, tfjsonpath.New(name), c))
			}
			accTest(t,
				resource.TestStep{
					Config: config,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: append(plan, plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionCreate)),
					},
					ConfigStateChecks: state,
				},
				resource.TestStep{
					Config:           config,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				},
			)
		})
	}
}

// preset reads back as the preset the plan used: the one model names when
// unset, exactly as written when set, and null with a base_config. A
// change of the preset it reads back is an in-place update.
func TestAccPDPipeline_PresetReadBack(t *testing.T) {
	const dsAddr = "data.omni_pd_pipeline.test"
	tests := []struct {
		name   string
		lines  []string
		preset knownvalue.Check
		stages int
	}{
		{"inferred", nil, knownvalue.StringExact("qwen3_omni_moe"), 4},
		{"inferred, any case", []string{`model = "qwen/qwen2.5-omni-3b"`}, knownvalue.StringExact("qwen2_5_omni"), 4},
		{"set", []string{`preset = "qwen3_omni_moe_thinker_only"`}, knownvalue.StringExact("qwen3_omni_moe_thinker_only"), 2},
		{"set for a model no preset knows", []string{`model = "Qwen/Qwen3-Omni"`, `preset = "qwen3_omni_moe"`}, knownvalue.StringExact("qwen3_omni_moe"), 4},
		{"base_config", []string{baseConfig(goodBase)}, knownvalue.Null(), 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := badInput{body: tc.lines}
			config := c.config()
			accTest(t,
				resource.TestStep{
					Config: config,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("preset"), tc.preset),
						plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages"), knownvalue.ListSizeExact(tc.stages)),
					}},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("preset"), tc.preset),
						statecheck.ExpectKnownValue(dsAddr, tfjsonpath.New("preset"), tc.preset),
					},
				},
				resource.TestStep{
					Config:           config,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				},
			)
		})
	}
	// From the Instruct model to the Thinking one, the inferred preset
	// changes in place, as any input does.
	accTest(t,
		resource.TestStep{Config: pipelineResource()},
		resource.TestStep{
			Config: strings.Replace(pipelineResource(), seedModel, thinkingModel, 1),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("preset"), knownvalue.StringExact("qwen3_omni_moe_thinker_only")),
			}},
		},
	)
}
