package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const dataAddr = "data.omni_pd_pipeline.test"

// both declares the resource and the data source with the same inputs.
func both(lines string) string {
	return `
resource "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + lines + `
}

data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + lines + `
}
`
}

func versionChecks(addr, version, release string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact(version)),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact(release)),
	}
}

// Unset, vllm_omni_version reads back the release the plan chose, known in
// the plan; set, exactly what was written, with the release it resolved to.
// Either way the next plan is empty, and a new version updates in place.
func TestAccPDPipeline_VLLMOmniVersion(t *testing.T) {
	ids := statecheck.CompareValue(compare.ValuesDiffer())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: both(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.24.0")),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.24.0")),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("serve_command"), knownvalue.StringRegexp(regexp.MustCompile(` --stage-configs-path /`))),
				}},
				ConfigStateChecks: append(append(versionChecks(resAddr, "0.24.0", "0.24.0"), versionChecks(dataAddr, "0.24.0", "0.24.0")...),
					ids.AddStateValue(resAddr, tfjsonpath.New("id"))),
			},
			{
				Config:           both(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// A line: the config and the command are the same for 0.22.0 on
				// one host, but the machine must carry another release, so the
				// units name it and the id changes.
				Config: both(`vllm_omni_version = "0.22"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.22")),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.22.0")),
				}},
				ConfigStateChecks: append(append(versionChecks(resAddr, "0.22", "0.22.0"), versionChecks(dataAddr, "0.22", "0.22.0")...),
					ids.AddStateValue(resAddr, tfjsonpath.New("id"))),
			},
			{
				Config:           both(`vllm_omni_version = "0.22"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// Unset again: the resource keeps the release it planned for,
				// as it keeps its ports, now spelled as that release; the data
				// source takes the default.
				Config: both(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.22.0")),
				}},
				ConfigStateChecks: append(versionChecks(resAddr, "0.22.0", "0.22.0"), versionChecks(dataAddr, "0.24.0", "0.24.0")...),
			},
			{
				Config:           both(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// triggers replace the resource, which then plans afresh.
				Config: pipelineResource(`triggers = { rev = "2" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.24.0")),
				}},
			},
		},
	})
}

// Across hosts the release decides the launch flags: 0.22.0 has no
// --omni-replica-address, so the commands and the id differ from 0.24.0's.
func TestAccPDPipeline_VLLMOmniVersionChangesLaunch(t *testing.T) {
	ids := statecheck.CompareValue(compare.ValuesDiffer())
	hosts := `prefill = { host = "10.0.0.1" }
  decode = { host = "10.0.0.2" }`
	worker := tfjsonpath.New("launches").AtSliceIndex(1).AtMapKey("processes").AtSliceIndex(0).AtMapKey("command")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: both(hosts),
				ConfigStateChecks: []statecheck.StateCheck{
					ids.AddStateValue(resAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(dataAddr, worker, knownvalue.StringRegexp(regexp.MustCompile(`--omni-replica-address 10\.0\.0\.2`))),
				},
			},
			{
				Config: both(hosts + "\n  vllm_omni_version = \"0.22.0\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					ids.AddStateValue(resAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(dataAddr, worker, knownvalue.StringRegexp(regexp.MustCompile(`--omni-master-port \d+$`))),
				},
			},
		},
	})
}

// An unknown vllm_omni_version leaves every output unknown, and the version
// too, without an error; a version that cannot run the plan is an error
// at plan time.
func TestAccPDPipeline_VLLMOmniVersionUnknownAndRefused(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: `
resource "terraform_data" "version" {
  input = "0.24"
}
` + pipelineResource(`vllm_omni_version = terraform_data.version.output`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(unknownOutputChecks(resAddr),
					plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("vllm_omni_version")))},
				ConfigStateChecks: versionChecks(resAddr, "0.24", "0.24.0"),
			},
			{
				Config:      both(`vllm_omni_version = "0.30.0"`),
				ExpectError: regexp.MustCompile(`(?s)vllm-omni 0\.30\.0 cannot run this plan.*Releases that run this plan:.*0\.26\.0rc1.*\[release_no_pd\]`),
			},
		},
	})
}

// A stages output on the user's own pipeline registration: no release runs
// it natively, so the default is the newest final release that loads the
// dialect, launched with --deploy-config and async_chunk written.
func TestAccPDPipeline_VLLMOmniVersionUserPipeline(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: both(`format = "stages"
  pipeline = "qwen3_omni_moe_pd"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.32.0")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("serve_command"), knownvalue.StringRegexp(regexp.MustCompile(` --deploy-config /\S+$`))),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`\Apipeline: qwen3_omni_moe_pd\nasync_chunk: false\nstages:\n`))),
			}},
			ConfigStateChecks: versionChecks(dataAddr, "0.32.0", "0.32.0"),
		}},
	})
}

// stage_overrides = { talker = null } is no override.
func TestAccPDPipeline_NullOverride(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: both(`stage_overrides = { talker = null, code2wav = { max_num_seqs = 2 } }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`model_stage: code2wav`))),
				statecheck.CompareValuePairs(resAddr, tfjsonpath.New("id"), dataAddr, tfjsonpath.New("id"), compare.ValuesSame()),
			},
		}},
	})
}

// config_sha256 is Terraform's own sha256 of config_yaml; health and each
// process's preflight are known in the plan.
func TestAccPDPipeline_VerifyOutputs(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: pipelineResource() + `
output "sha_matches" {
  value = sha256(omni_pd_pipeline.test.config_yaml) == omni_pd_pipeline.test.config_sha256
}
`,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_sha256"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{64}$`))),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("liveness_url"), knownvalue.StringExact("http://127.0.0.1:8091/health")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("readiness_url"), knownvalue.StringExact("http://127.0.0.1:8091/v1/models")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("readiness_command"), knownvalue.StringRegexp(regexp.MustCompile(` http://127\.0\.0\.1:8091/v1/models Qwen/Qwen3-Omni-30B-A3B-Instruct$`))),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(0).AtMapKey("preflight_command"),
					knownvalue.StringRegexp(regexp.MustCompile(`^/usr/local/bin/python3 -c .* 0\.24\.0 release 0\.24 /etc/vllm-omni/deploy-config\.yaml [0-9a-f]{64}$`))),
				plancheck.ExpectKnownOutputValue("sha_matches", knownvalue.Bool(true)),
			}},
		}},
	})
}

// config_path, api_port and format read back what the plan used when they
// are unset, known in the plan, and exactly what was written when set.
func TestAccPDPipeline_EffectiveValues(t *testing.T) {
	unset := []plancheck.PlanCheck{
		plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_path"), knownvalue.StringExact("/etc/vllm-omni/deploy-config.yaml")),
		plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("api_port"), knownvalue.Int64Exact(8091)),
		plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("format"), knownvalue.StringExact("stage_args")),
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config:           both("") + `output "path" { value = data.omni_pd_pipeline.test.config_path }`,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: unset},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("path", knownvalue.StringExact("/etc/vllm-omni/deploy-config.yaml")),
					statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("api_port"), knownvalue.Int64Exact(8091)),
					statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("format"), knownvalue.StringExact("stage_args")),
				},
			},
			{
				Config:           both("") + `output "path" { value = data.omni_pd_pipeline.test.config_path }`,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: both(`config_path = "/srv/omni/pd.yaml"
  api_port = 9000
  format = "stage_args"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_path"), knownvalue.StringExact("/srv/omni/pd.yaml")),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("api_port"), knownvalue.Int64Exact(9000)),
				}},
			},
			{
				Config: both(`config_path = "/srv/omni/pd.yaml"
  api_port = 9000
  format = "stage_args"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
