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

// With a version, the release's own checks: the provider's plan for that
// release passes them, the recipe's keys and another release's dialect do
// not, and a bad version is an argument error.
func TestFunctionValidateStageConfig_Version(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model             = "` + seedModel + `"
  vllm_omni_version = "0.22"
}

locals {
  recipe = replace(data.omni_pd_pipeline.test.config_yaml, "custom_process_input_func", "sync_process_input_func")
}

output "planned" {
  value = provider::omni::validate_stage_config(data.omni_pd_pipeline.test.config_yaml, data.omni_pd_pipeline.test.vllm_omni_version)
}

output "recipe_keys" {
  value = provider::omni::validate_stage_config(local.recipe, "0.22.0")
}

output "newer_release" {
  value = provider::omni::validate_stage_config(data.omni_pd_pipeline.test.config_yaml, "0.28")
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("planned", knownvalue.ListExact([]knownvalue.Check{})),
			statecheck.ExpectKnownOutputValue("recipe_keys", knownvalue.ListExact([]knownvalue.Check{
				knownvalue.StringRegexp(regexp.MustCompile(`stage 2 \(talker\) sets sync_process_input_func, which vllm-omni 0\.22\.0 never reads; it reads custom_process_input_func\. \[release_ignored_key\]$`)),
				knownvalue.StringRegexp(regexp.MustCompile(`stage 3 \(code2wav\) sets sync_process_input_func.*\[release_ignored_key\]$`)),
			})),
			statecheck.ExpectKnownOutputValue("newer_release", knownvalue.ListExact([]knownvalue.Check{
				knownvalue.StringRegexp(regexp.MustCompile(`vllm-omni 0\.28\.0 does not load a stage_args config\. \[release_dialect_unreadable\]$`)),
				// The PD input processors the stage_args config names are
				// gone from qwen3_omni by then.
				knownvalue.StringRegexp(regexp.MustCompile(`stage 2 \(talker\) names custom_process_input_func \S+\.qwen3_omni\.thinker2talker, which vllm-omni 0\.28\.0 does not define .*\[release_processor_missing\]$`)),
				knownvalue.StringRegexp(regexp.MustCompile(`stage 3 \(code2wav\) names custom_process_input_func \S+\.qwen3_omni\.talker2code2wav, which vllm-omni 0\.28\.0 does not define .*\[release_processor_missing\]$`)),
			})),
		},
	})
	functionTest(t, resource.TestStep{
		Config:      `output "test" { value = provider::omni::validate_stage_config("stage_args: []", "latest") }`,
		ExpectError: regexp.MustCompile(`(?s)"latest" is not a vllm-omni.*version.*\[release_malformed\]`),
	})
}
