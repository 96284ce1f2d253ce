package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// A hand-written three-stage config in the stage_args dialect.
const threeStageConfig = `
stage_args:
  - stage_id: 0
    runtime:
      devices: "0,1"
    engine_args:
      model_stage: thinker
      tensor_parallel_size: 2
  - stage_id: 1
    runtime:
      devices: "2"
    engine_args:
      model_stage: talker
      gpu_memory_utilization: 0.5
    engine_input_source: [0]
  - stage_id: 2
    runtime:
      devices: "2"
    engine_args:
      model_stage: code2wav
      gpu_memory_utilization: 0.3
    engine_input_source: [1]
    final_output: true
runtime:
  enabled: true
  edges:
    - from: 0
      to: 1
    - from: 1
      to: 2
`

func TestFunctionParseStageConfig_Known(t *testing.T) {
	i := knownvalue.Int64Exact
	stage := func(id int64, ms string, devices, inputs []knownvalue.Check, final bool) knownvalue.Check {
		return knownvalue.ObjectExact(map[string]knownvalue.Check{
			"stage_id": i(id), "model_stage": knownvalue.StringExact(ms),
			"devices": knownvalue.ListExact(devices), "inputs": knownvalue.ListExact(inputs),
			"final_output": knownvalue.Bool(final),
		})
	}
	edge := func(from, to int64) knownvalue.Check {
		return knownvalue.ObjectExact(map[string]knownvalue.Check{"from": i(from), "to": i(to)})
	}
	functionTest(t, resource.TestStep{
		Config: `
output "test" {
  value = provider::omni::parse_stage_config(<<-EOT
` + threeStageConfig + `
  EOT
  )
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("test", knownvalue.ObjectExact(map[string]knownvalue.Check{
				"format": knownvalue.StringExact("stage_args"),
				"stages": knownvalue.ListExact([]knownvalue.Check{
					stage(0, "thinker", []knownvalue.Check{i(0), i(1)}, []knownvalue.Check{}, false),
					stage(1, "talker", []knownvalue.Check{i(2)}, []knownvalue.Check{i(0)}, false),
					stage(2, "code2wav", []knownvalue.Check{i(2)}, []knownvalue.Check{i(1)}, true),
				}),
				"edges": knownvalue.ListExact([]knownvalue.Check{edge(0, 1), edge(1, 2)}),
			})),
		},
	})
}

func TestFunctionParseStageConfig_Null(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config:      `output "test" { value = provider::omni::parse_stage_config(null) }`,
		ExpectError: wrapRE("argument must not be null"),
	})
}

func TestFunctionParseStageConfig_Unknown(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config: `
resource "terraform_data" "config" {
  input = "stage_args: []"
}

output "test" {
  value = provider::omni::parse_stage_config(terraform_data.config.output)
}
`,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownOutputValue("test")},
		},
	})
}

func TestFunctionParseStageConfig_Invalid(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config:      `output "test" { value = provider::omni::parse_stage_config("stage_args: [unclosed") }`,
		ExpectError: regexp.MustCompile(`(?s)config is not a readable.*deploy config`),
	})
}
