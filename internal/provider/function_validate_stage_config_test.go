package provider

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// The provider's own output passes its own checks.
func TestFunctionValidateStageConfig_Known(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
}

output "test" {
  value = provider::omni::validate_stage_config(data.omni_pd_pipeline.test.config_yaml)
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("test", knownvalue.ListExact([]knownvalue.Check{})),
		},
	})
}

// A sound hand-written config has no problems.
func TestFunctionValidateStageConfig_Sound(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config: `
output "test" {
  value = provider::omni::validate_stage_config(<<-EOT
` + threeStageConfig + `
  EOT
  )
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("test", knownvalue.ListExact([]knownvalue.Check{})),
		},
	})
}

// Problems are returned, not raised, each with its code and path.
func TestFunctionValidateStageConfig_Problems(t *testing.T) {
	duplicate := strings.Replace(threeStageConfig, "stage_id: 1", "stage_id: 0", 1)
	functionTest(t, resource.TestStep{
		Config: `
output "test" {
  value = provider::omni::validate_stage_config(<<-EOT
` + duplicate + `
  EOT
  )
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("test", knownvalue.ListPartial(map[int]knownvalue.Check{
				0: knownvalue.StringRegexp(regexp.MustCompile(`^two stages share a stage_id: stage_id 0 is used by .* \[stage_id_duplicate\]$`)),
			})),
		},
	})
}

func TestFunctionValidateStageConfig_Null(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config:      `output "test" { value = provider::omni::validate_stage_config(null) }`,
		ExpectError: wrapRE("argument must not be null"),
	})
}

func TestFunctionValidateStageConfig_Unknown(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config: `
resource "terraform_data" "config" {
  input = "stage_args: []"
}

output "test" {
  value = provider::omni::validate_stage_config(terraform_data.config.output)
}
`,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownOutputValue("test")},
		},
	})
}

// The data source, the resource and parse_stage_config agree on the graph
// of the same pipeline.
func TestFunctionParseStageConfig_AgreesWithPipeline(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
}

resource "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
}

locals {
  from_data     = provider::omni::parse_stage_config(data.omni_pd_pipeline.test.config_yaml)
  from_resource = provider::omni::parse_stage_config(omni_pd_pipeline.test.config_yaml)
}

output "edges_match" {
  value = local.from_data.edges == data.omni_pd_pipeline.test.edges && local.from_resource.edges == omni_pd_pipeline.test.edges
}

output "stages_match" {
  value = [for s in local.from_data.stages : [s.stage_id, s.model_stage, s.devices, s.inputs]] == [for s in data.omni_pd_pipeline.test.stages : [s.stage_id, s.model_stage, s.devices, s.inputs]]
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("edges_match", knownvalue.Bool(true)),
			statecheck.ExpectKnownOutputValue("stages_match", knownvalue.Bool(true)),
		},
	})
}
