package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
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
	accTest(t,
		resource.TestStep{
			Config: both(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.24.0")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.24.0")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("serve_command"), knownvalue.StringRegexp(regexp.MustCompile(` --stage-configs-path /\S+ --stage-id 0 `))),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes"), knownvalue.ListSizeExact(4)),
			}},
			ConfigStateChecks: append(append(versionChecks(resAddr, "0.24.0", "0.24.0"), versionChecks(dataAddr, "0.24.0", "0.24.0")...),
				ids.AddStateValue(resAddr, tfjsonpath.New("id"))),
		},
		resource.TestStep{
			Config:           both(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
			// A line: 0.22.0 applies each stage's runtime.env in a
			// whole-pipeline process, so one host runs one process again,
			// without the stage flags; the machine carries another
			// release, so the units name it and the id changes.
			Config: both(`vllm_omni_version = "0.22"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.22")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.22.0")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("serve_command"), knownvalue.StringRegexp(regexp.MustCompile(` --stage-configs-path /\S+\.yaml$`))),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes"), knownvalue.ListSizeExact(1)),
			}},
			ConfigStateChecks: append(append(versionChecks(resAddr, "0.22", "0.22.0"), versionChecks(dataAddr, "0.22", "0.22.0")...),
				ids.AddStateValue(resAddr, tfjsonpath.New("id"))),
		},
		resource.TestStep{
			Config:           both(`vllm_omni_version = "0.22"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
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
		resource.TestStep{
			Config:           both(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
			// triggers replace the resource, which then plans afresh.
			Config: pipelineResource(`triggers = { rev = "2" }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionDestroyBeforeCreate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.24.0")),
			}},
		},
	)
}

// Across hosts the release decides the launch flags: the replica flags
// came with 0.22.0, so 0.22.0 passes --omni-replica-address as 0.24.0
// does (the id still differs: another release), and 0.21.0rc1 has none.
func TestAccPDPipeline_VLLMOmniVersionChangesLaunch(t *testing.T) {
	ids := statecheck.CompareValue(compare.ValuesDiffer())
	hosts := `prefill = { host = "10.0.0.1" }
  decode = { host = "10.0.0.2" }`
	worker := tfjsonpath.New("launches").AtSliceIndex(1).AtMapKey("processes").AtSliceIndex(0).AtMapKey("systemd_dropin").AtMapKey("content")
	accTest(t,
		resource.TestStep{
			Config: both(hosts),
			ConfigStateChecks: []statecheck.StateCheck{
				ids.AddStateValue(resAddr, tfjsonpath.New("id")),
				statecheck.ExpectKnownValue(dataAddr, worker, knownvalue.StringRegexp(regexp.MustCompile(`(?m)^Environment="OMNI_PD_STAGE_ARGS=--headless --omni-replica-address 10\.0\.0\.2"$`))),
			},
		},
		resource.TestStep{
			Config: both(hosts + "\n  vllm_omni_version = \"0.22.0\""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				ids.AddStateValue(resAddr, tfjsonpath.New("id")),
				statecheck.ExpectKnownValue(dataAddr, worker, knownvalue.StringRegexp(regexp.MustCompile(`(?m)^Environment="OMNI_PD_STAGE_ARGS=--headless --omni-replica-address 10\.0\.0\.2"$`))),
			},
		},
		resource.TestStep{
			Config: both(hosts + "\n  vllm_omni_version = \"0.21.0rc1\""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				ids.AddStateValue(resAddr, tfjsonpath.New("id")),
				statecheck.ExpectKnownValue(dataAddr, worker, knownvalue.StringRegexp(regexp.MustCompile(`(?m)^Environment="OMNI_PD_STAGE_ARGS=--headless"$`))),
			},
		},
	)
}

// An unknown vllm_omni_version leaves every output unknown, and the version
// too, without an error; a version that cannot run the plan is an error
// at plan time.
func TestAccPDPipeline_VLLMOmniVersionUnknownAndRefused(t *testing.T) {
	accTest(t,
		resource.TestStep{
			Config: `
resource "terraform_data" "version" {
  input = "0.24"
}
` + pipelineResource(`vllm_omni_version = terraform_data.version.output`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(unknownOutputChecks(resAddr),
				plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("vllm_omni_version")))},
			ConfigStateChecks: versionChecks(resAddr, "0.24", "0.24.0"),
		},
		resource.TestStep{
			// It loads only the stages dialect, where PD runs the thinker
			// alone: the talker is refused, naming where the whole
			// pipeline runs PD.
			Config:      both(`vllm_omni_version = "0.30.0"`),
			ExpectError: regexp.MustCompile(`(?s)vllm-omni\s+0\.30\.0\s+cannot\s+run\s+this\s+plan.*` + loose(`a release that runs the whole pipeline's prefill-decode: 0\.20\.0, 0\.21\.0rc1, 0\.22\.0, 0\.23\.0rc1, 0\.24\.0\.`) + `.*\[pd_thinker_only\]`),
		},
		resource.TestStep{
			// Qwen3-Omni's PD input processors are gone from 0.25.0rc1.
			Config:      both(`vllm_omni_version = "0.25.0rc1"`),
			ExpectError: regexp.MustCompile(`(?s)` + loose(`vllm-omni 0\.25\.0rc1 cannot run this plan: it has no input processor \S+\.qwen3_omni\.thinker2talker`) + `.*\[release_no_pd\]`),
		},
		resource.TestStep{
			Config:      both(`vllm_omni_version = "0.26.0rc1"`),
			ExpectError: regexp.MustCompile(`(?s)` + loose(`vllm-omni 0\.26\.0rc1 cannot run this plan: it has no input processor \S+\.qwen3_omni\.thinker2talker`) + `.*\[release_no_pd\]`),
		},
		resource.TestStep{
			// 0.19.0rc1 is not in the table: it predates PD.
			Config:      both(`vllm_omni_version = "0.19.0rc1"`),
			ExpectError: regexp.MustCompile(`(?s)` + loose(`vllm-omni 0\.19\.0rc1 is older than 0\.20\.0, the first release with prefill-decode disaggregation`) + `.*\[release_before_pd\]`),
		},
	)
}

// A stages output on the user's own pipeline registration: no release runs
// it natively, so the default is the newest final release that loads the
// dialect, launched with --deploy-config and async_chunk written, each stage
// as its own process (the release applies no runtime.env in a
// whole-pipeline process): serve_command is the head's.
func TestAccPDPipeline_VLLMOmniVersionUserPipeline(t *testing.T) {
	newest := releases.NewestFinal().Version
	accTest(t, resource.TestStep{
		Config: both(`format = "stages"
  pipeline = "qwen3_omni_moe_pd"`),
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact(newest)),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("serve_command"), knownvalue.StringRegexp(regexp.MustCompile(
				` --deploy-config /\S+ --stage-id 0 --omni-master-address 127\.0\.0\.1 --omni-master-port 25203$`))),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes"), knownvalue.ListSizeExact(4)),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`\Apipeline: qwen3_omni_moe_pd\nasync_chunk: false\nstages:\n`))),
		}},
		ConfigStateChecks: versionChecks(dataAddr, newest, newest),
	})
}

// On a release that loads only the stages dialect the thinker alone runs
// on the registration the plan writes: known in the plan, beside the
// check script, named in the config and handed to every unit's preflight.
func TestAccPDPipeline_VLLMOmniVersionRegistration(t *testing.T) {
	accTest(t, resource.TestStep{
		Config: `
resource "omni_pd_pipeline" "test" {
  model             = "Qwen/Qwen3-Omni-30B-A3B-Thinking"
  vllm_omni_version = "0.27.0rc1"
}
`,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("registration_path"), knownvalue.StringRegexp(regexp.MustCompile(`^/usr/local/lib/vllm-omni/omni_pd_[0-9a-f]{16}\.py$`))),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("registration"), knownvalue.StringRegexp(regexp.MustCompile(`(?m)^register_pipeline\(\n    PipelineConfig\(\n        model_type=__name__,$`))),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`\Apipeline: omni_pd_[0-9a-f]{16}\nasync_chunk: false\nstages:\n`))),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("systemd_unit").AtMapKey("content"), knownvalue.StringRegexp(regexp.MustCompile(` --registration /usr/local/lib/vllm-omni/omni_pd_[0-9a-f]{16}\.py `))),
		}},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.27.0rc1")),
		},
	})
}

// stage_overrides = { talker = null } is no override: the plan is the one
// without the talker key (the same id and config), while code2wav's
// override beside it still applies.
func TestAccPDPipeline_NullOverride(t *testing.T) {
	accTest(t, resource.TestStep{
		Config: `
resource "omni_pd_pipeline" "test" {
  model           = "` + seedModel + `"
  stage_overrides = { talker = null, code2wav = { max_num_seqs = 2 } }
}

data "omni_pd_pipeline" "test" {
  model           = "` + seedModel + `"
  stage_overrides = { code2wav = { max_num_seqs = 2 } }
}
`,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`max_num_seqs: 2\n\s+model_stage: code2wav\n`))),
		}},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.CompareValuePairs(resAddr, tfjsonpath.New("id"), dataAddr, tfjsonpath.New("id"), compare.ValuesSame()),
			statecheck.CompareValuePairs(resAddr, tfjsonpath.New("config_yaml"), dataAddr, tfjsonpath.New("config_yaml"), compare.ValuesSame()),
		},
	})
}

// config_sha256 is Terraform's own sha256 of config_yaml; health (with the
// smoke request that must cross the PD pair) and each process's preflight
// are known in the plan. The template's preflight checks the release, the
// config and every stage's dotted paths; each stage's drop-in adds its GPUs
// and, on the PD pair, the connector's transport package.
func TestAccPDPipeline_VerifyOutputs(t *testing.T) {
	dropIn := func(j int) tfjsonpath.Path {
		return tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(j).AtMapKey("systemd_dropin").AtMapKey("content")
	}
	checks := func(words string) knownvalue.Check {
		return knownvalue.StringRegexp(regexp.MustCompile(`(?m)^Environment="OMNI_PD_CHECKS=` + regexp.QuoteMeta(words) + `"$`))
	}
	accTest(t, resource.TestStep{
		Config: pipelineResource() + `
output "sha_matches" {
  value = sha256(omni_pd_pipeline.test.config_yaml) == omni_pd_pipeline.test.config_sha256
}
`,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_sha256"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{64}$`))),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("liveness_url"), knownvalue.StringExact("http://127.0.0.1:8091/health")),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("readiness_url"), knownvalue.StringExact("http://127.0.0.1:8091/v1/models")),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("readiness_command"), knownvalue.StringExact(
				"python3 /usr/local/lib/vllm-omni/pd-check.py ready http://127.0.0.1:8091/v1/models Qwen/Qwen3-Omni-30B-A3B-Instruct")),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("smoke_url"), knownvalue.StringExact("http://127.0.0.1:8091/v1/chat/completions")),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("smoke_command"), knownvalue.StringExact(
				"python3 /usr/local/lib/vllm-omni/pd-check.py smoke http://127.0.0.1:8091/v1/chat/completions Qwen/Qwen3-Omni-30B-A3B-Instruct vllm-omni-stage@0.service")),
			// python_path unset with vllm in /usr/local/bin: python3 as the
			// unit's PATH finds it.
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("systemd_unit").AtMapKey("content"),
				knownvalue.StringRegexp(regexp.MustCompile(`(?m)^ExecStart=/usr/bin/env python3 /usr/local/lib/vllm-omni/pd-check\.py preflight 0\.24\.0 release 0\.24 /etc/vllm-omni/deploy-config\.yaml [0-9a-f]{64}`+
					` --import scheduler_cls=\S+\.OmniARScheduler`+
					` --import custom_process_input_func=\S+\.qwen3_omni\.thinker2talker --import custom_process_input_func=\S+\.qwen3_omni\.talker2code2wav`+
					` --import scheduler_cls=\S+\.OmniGenerationScheduler`+
					` --head 127\.0\.0\.1:25203 --head-wait 600 --head-unit vllm-omni-stage@0\.service \$OMNI_PD_CHECKS -- /usr/local/bin/vllm serve `))),
			plancheck.ExpectKnownValue(resAddr, dropIn(0), checks("--gpus 1 --transport NixlConnector=nixl._api")),
			plancheck.ExpectKnownValue(resAddr, dropIn(1), checks("--gpus 2 --transport NixlConnector=nixl._api")),
			// Stages 2 and 3 load no KV connector: no transport to import.
			plancheck.ExpectKnownValue(resAddr, dropIn(3), checks("--gpus 3")),
			plancheck.ExpectKnownOutputValue("sha_matches", knownvalue.Bool(true)),
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
	accTest(t,
		resource.TestStep{
			Config:           both("") + `output "path" { value = data.omni_pd_pipeline.test.config_path }`,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: unset},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("path", knownvalue.StringExact("/etc/vllm-omni/deploy-config.yaml")),
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("api_port"), knownvalue.Int64Exact(8091)),
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("format"), knownvalue.StringExact("stage_args")),
			},
		},
		resource.TestStep{
			Config:           both("") + `output "path" { value = data.omni_pd_pipeline.test.config_path }`,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
			Config: both(`config_path = "/srv/omni/pd.yaml"
  api_port = 9000
  format = "stage_args"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_path"), knownvalue.StringExact("/srv/omni/pd.yaml")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("api_port"), knownvalue.Int64Exact(9000)),
			}},
		},
		resource.TestStep{
			Config: both(`config_path = "/srv/omni/pd.yaml"
  api_port = 9000
  format = "stage_args"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}

// planCodes plans a data source configuration the way a read does and
// returns the codes of its errors and warnings, each with the attribute
// path it is reported on ("" for none).
func planCodes(t *testing.T, set map[string]tftypes.Value) (errs, warnings map[string]string) {
	t.Helper()
	_, diags := readDataSource(context.Background(), dataSourceConfig(t, set))
	errs, warnings = map[string]string{}, map[string]string{}
	code := regexp.MustCompile(`\[([a-z0-9_]+)\]$`)
	for _, d := range diags {
		m := code.FindStringSubmatch(d.Detail())
		if m == nil {
			t.Fatalf("a diagnostic without a code: %s: %s", d.Summary(), d.Detail())
		}
		at := ""
		if dp, ok := d.(diag.DiagnosticWithPath); ok {
			at = dp.Path().String()
		}
		if d.Severity() == diag.SeverityError {
			errs[m[1]] = at
		} else {
			warnings[m[1]] = at
		}
	}
	return errs, warnings
}

// A release whose code was not read at its own commit (0.26.0, cut from a
// branch off main, and the releases after the history read) plans with the
// facts of the newest release read, and warns on vllm_omni_version; a row
// read at its commit does not.
func TestPDPipeline_ReleaseRowUnreadWarns(t *testing.T) {
	userPipeline := func(version string) map[string]tftypes.Value {
		return seedWith(map[string]tftypes.Value{
			"format": tfStr("stages"), "pipeline": tfStr("qwen3_omni_moe_pd"), "vllm_omni_version": tfStr(version),
		})
	}
	for version, unread := range map[string]bool{"0.26.0": true, "0.27.0": true, "0.28.0": true, "0.32.0": true, "0.27.0rc1": false, "0.25.0rc1": false} {
		t.Run(version, func(t *testing.T) {
			errs, warnings := planCodes(t, userPipeline(version))
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			at, warned := warnings["release_row_unread"]
			switch {
			case warned != unread:
				t.Errorf("release_row_unread warned %v, want %v (warnings %v)", warned, unread, warnings)
			case warned && at != "vllm_omni_version":
				t.Errorf("release_row_unread is on %q, want vllm_omni_version", at)
			}
		})
	}
	// The default plan's release, and every release it runs on, was read.
	for _, version := range []string{"", "0.20.0", "0.21.0rc1", "0.22.0", "0.23.0rc1", "0.24.0"} {
		set := seedWith(nil)
		if version != "" {
			set["vllm_omni_version"] = tfStr(version)
		}
		errs, warnings := planCodes(t, set)
		if len(errs) != 0 || len(warnings) != 0 {
			t.Errorf("version %q: errors %v, warnings %v; want none", version, errs, warnings)
		}
	}
}

// head_wait_seconds only matters where a headless process waits for the
// head: it warns on one host for a release that runs the whole pipeline in
// one process (0.22.0, 0.23.0rc1), and not where each stage is its own
// process (the default release on one host, or any release across hosts).
func TestPDPipeline_HeadWaitWarnsOnlyForWholePipeline(t *testing.T) {
	wait := attrObject(t, "systemd", map[string]tftypes.Value{"head_wait_seconds": tfNumber(120)})
	hosts := map[string]tftypes.Value{
		"prefill": attrObject(t, "prefill", map[string]tftypes.Value{"host": tfStr("10.0.0.1")}),
		"decode":  attrObject(t, "decode", map[string]tftypes.Value{"host": tfStr("10.0.0.2")}),
	}
	cases := []struct {
		name    string
		version string
		hosts   bool
		warns   bool
	}{
		{"default release on one host", "", false, false},
		{"0.24.0 on one host", "0.24.0", false, false},
		{"0.20.0 on one host", "0.20.0", false, false},
		{"0.22.0 on one host", "0.22.0", false, true},
		{"0.23.0rc1 on one host", "0.23.0rc1", false, true},
		{"0.22.0 across hosts", "0.22.0", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := seedWith(map[string]tftypes.Value{"systemd": wait})
			if c.version != "" {
				set["vllm_omni_version"] = tfStr(c.version)
			}
			if c.hosts {
				maps.Copy(set, hosts)
			}
			errs, warnings := planCodes(t, set)
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			at, warned := warnings["head_wait_unused"]
			if warned != c.warns || warned && at != "systemd.head_wait_seconds" {
				t.Errorf("head_wait_unused: warned %v on %q, want %v (warnings %v)", warned, at, c.warns, warnings)
			}
		})
	}
}

// On one host, the stages' own processes wait for the head's omni master
// on the loopback address for head_wait_seconds.
func TestAccPDPipeline_HeadWaitOnOneHost(t *testing.T) {
	dropIn := func(j int) tfjsonpath.Path {
		return tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(j).AtMapKey("systemd_dropin").AtMapKey("content")
	}
	unit := tfjsonpath.New("systemd_unit").AtMapKey("content")
	accTest(t, resource.TestStep{
		Config: pipelineResource(`systemd = { head_wait_seconds = 120 }`),
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			// Every stage's preflight has the head's master; it waits only
			// before a headless vllm, and the head's is not
			// (TestPreflightWaitsForTheHead).
			plancheck.ExpectKnownValue(resAddr, unit, knownvalue.StringRegexp(regexp.MustCompile(
				`(?m)^ExecStart=.* --head 127\.0\.0\.1:25203 --head-wait 120 --head-unit vllm-omni-stage@0\.service \$OMNI_PD_CHECKS -- `))),
			plancheck.ExpectKnownValue(resAddr, dropIn(0), stringWithout("--headless")),
			plancheck.ExpectKnownValue(resAddr, dropIn(2), knownvalue.StringRegexp(regexp.MustCompile(`(?m)^Environment="OMNI_PD_STAGE_ARGS=--headless"$`))),
			// The wait is the main process's, so the unit's start-up is
			// not stretched to cover it.
			plancheck.ExpectKnownValue(resAddr, unit, knownvalue.StringRegexp(regexp.MustCompile(`(?m)^TimeoutStartSec=120$`))),
		}},
	})
}

// Qwen2.5-Omni's PD input processors are gone from 0.24.0, so its default
// release is 0.22.0, where the whole pipeline runs in one process.
func TestAccPDPipeline_VLLMOmniVersionQwen25Default(t *testing.T) {
	const qwen25 = "Qwen/Qwen2.5-Omni-7B"
	accTest(t,
		resource.TestStep{
			Config: `
resource "omni_pd_pipeline" "test" {
  model = "` + qwen25 + `"
}
`,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.22.0")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.22.0")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("connector").AtMapKey("name"), knownvalue.StringExact("NixlConnector")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("serve_command"), knownvalue.StringExact(
					"vllm serve "+qwen25+" --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(0).AtMapKey("unit_name"),
					knownvalue.StringExact("vllm-omni.service")),
			}},
		},
		resource.TestStep{
			Config: `
resource "omni_pd_pipeline" "test" {
  model             = "` + qwen25 + `"
  vllm_omni_version = "0.24.0"
}
`,
			ExpectError: regexp.MustCompile(`(?s)` + loose(`vllm-omni 0\.24\.0 cannot run this plan: it has no input processor \S+\.qwen2_5_omni\.thinker2talker`) +
				`.*` + loose(`Set vllm_omni_version to a release that runs this plan: 0\.20\.0, 0\.21\.0rc1, 0\.22\.0, 0\.23\.0rc1\.`) + `.*\[release_no_pd\]`),
		},
	)
}

// stringWithout checks a string that does not contain text.
func stringWithout(text string) knownvalue.Check { return stringWithoutCheck{text} }

type stringWithoutCheck struct{ text string }

func (c stringWithoutCheck) CheckValue(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("expected a string, got %T", v)
	}
	if strings.Contains(s, c.text) {
		return fmt.Errorf("the string contains %q", c.text)
	}
	return nil
}

func (c stringWithoutCheck) String() string { return "a string without " + strconv.Quote(c.text) }
