package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// exampleModule reads a module under examples/ as one root configuration:
// its files minus versions.tf, whose provider requirement the test harness
// writes itself. The test then plans the module's own code, with its
// variables set through ConfigVariables.
func exampleModule(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", "modules", name)
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("module %s: %v", name, err)
	}
	var b strings.Builder
	for _, f := range files {
		if filepath.Base(f) == "versions.tf" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	return b.String()
}

// The packing module puts three pipelines on one 9-GPU host: each gets its
// own three GPUs, API port, connector and master ports and unit names, and
// no two collide.
func TestExampleModule_HostPacking(t *testing.T) {
	module := exampleModule(t, "pd-host-packing")
	vars := func(pipelines int) config.Variables {
		return config.Variables{"pipelines": config.IntegerVariable(pipelines), "gpus": config.IntegerVariable(9)}
	}
	checks := module + `
output "unique_ports" { value = length(distinct(flatten([for p in omni_pd_pipeline.this : [for port in p.ports : port.port]]))) == 12 }
output "unique_units" { value = length(distinct(flatten([for p in omni_pd_pipeline.this : [for proc in p.launches[0].processes : proc.unit_name]]))) == 12 }
`
	n := func(v int64) knownvalue.Check { return knownvalue.Int64Exact(v) }
	list := func(vs ...int64) knownvalue.Check {
		checks := make([]knownvalue.Check, len(vs))
		for i, v := range vs {
			checks[i] = n(v)
		}
		return knownvalue.ListExact(checks)
	}
	accTest(t,
		resource.TestStep{
			Config:          checks,
			ConfigVariables: vars(3),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownOutputValue("gpu_count", n(9)),
					plancheck.ExpectKnownOutputValue("unique_ports", knownvalue.Bool(true)),
					plancheck.ExpectKnownOutputValue("unique_units", knownvalue.Bool(true)),
				},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("pipelines", knownvalue.ListPartial(map[int]knownvalue.Check{
					1: knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"devices":       list(3, 4, 5),
						"ports":         list(8092, 25211, 25212, 25213),
						"config_path":   knownvalue.StringExact("/etc/vllm-omni/pipeline-1.yaml"),
						"serve_command": knownvalue.StringExact("vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8092 --stage-configs-path /etc/vllm-omni/pipeline-1.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25213"),
						"units": knownvalue.ListExact([]knownvalue.Check{
							knownvalue.StringExact("vllm-omni-1-stage@0.service"), knownvalue.StringExact("vllm-omni-1-stage@1.service"),
							knownvalue.StringExact("vllm-omni-1-stage@2.service"), knownvalue.StringExact("vllm-omni-1-stage@3.service"),
						}),
						"unit_files": knownvalue.MapPartial(map[string]knownvalue.Check{
							"/etc/systemd/system/vllm-omni-1-stage@.service":              knownvalue.StringRegexp(regexp.MustCompile(`--stage-id %i --omni-master-address 127\.0\.0\.1 --omni-master-port 25213\n`)),
							"/etc/systemd/system/vllm-omni-1-stage@3.service.d/plan.conf": knownvalue.StringRegexp(regexp.MustCompile(`(?m)^Environment="OMNI_PD_STAGE_ARGS=--headless"$`)),
						}),
						"check_script_path": knownvalue.StringExact("/usr/local/lib/vllm-omni/pd-check.py"),
					}),
				})),
				statecheck.ExpectKnownOutputValue("ports", list(
					8091, 25201, 25202, 25203,
					8092, 25211, 25212, 25213,
					8093, 25221, 25222, 25223,
				)),
			},
		},
		resource.TestStep{
			Config:          checks,
			ConfigVariables: vars(4),
			ExpectError:     regexp.MustCompile(`4 pipelines with tensor_parallel_size 1 need 12 GPUs, but the host has\s+9`),
		},
	)
}

// The provider judges one pipeline's paths, not two pipelines' against each
// other: the packing module gives each pipeline its own deploy config and
// unit names, refuses a config_dir that would not make a file's path of
// each, and a precondition fails an edit that makes two the same.
func TestExampleModule_HostPackingPathsDistinct(t *testing.T) {
	module := exampleModule(t, "pd-host-packing")
	vars := func(dir string) config.Variables {
		v := config.Variables{"pipelines": config.IntegerVariable(2), "gpus": config.IntegerVariable(6)}
		if dir != "" {
			v["config_dir"] = config.StringVariable(dir)
		}
		return v
	}
	shared := strings.Replace(module, `"${var.config_dir}/pipeline-${i}.yaml"`, `"${var.config_dir}/pipeline.yaml"`, 1)
	if shared == module {
		t.Fatal("the module no longer names its config paths as this test expects")
	}
	var steps []resource.TestStep
	for _, dir := range []string{"/etc/vllm-omni/", "etc/vllm-omni", "/etc/../vllm-omni", "/"} {
		steps = append(steps, resource.TestStep{Config: module, ConfigVariables: vars(dir), PlanOnly: true,
			ExpectError: regexp.MustCompile(`config_dir must be an absolute, normalized\s+directory path`)})
	}
	steps = append(steps, resource.TestStep{Config: shared, ConfigVariables: vars(""), PlanOnly: true,
		ExpectError: regexp.MustCompile(`(?s)Each pipeline on the host needs a deploy config.*/etc/vllm-omni/pipeline\.yaml,\s+/etc/vllm-omni/pipeline\.yaml`)})
	accTest(t, steps...)
}

// The pd-pipeline module plans one cluster: its cloud-init writes the config
// its release runs, the release can be pinned through the module, and so
// can the API port and the PD pair's GPUs and max_num_seqs, without an edit
// of the module.
func TestExampleModule_PDPipeline(t *testing.T) {
	module := exampleModule(t, "pd-pipeline") + `
output "release_problems" { value = provider::omni::validate_stage_config(omni_pd_pipeline.this.config_yaml, omni_pd_pipeline.this.vllm_omni_release) }
output "max_num_seqs" { value = [for s in yamldecode(omni_pd_pipeline.this.config_yaml).stage_args : s.engine_args.max_num_seqs] }
`
	vars := func(version string) config.Variables {
		v := config.Variables{"cluster_name": config.StringVariable("a"), "model": config.StringVariable(seedModel), "gpus": config.IntegerVariable(4)}
		if version != "" {
			v["vllm_omni_version"] = config.StringVariable(version)
		}
		return v
	}
	tuned := vars("")
	tuned["api_port"] = config.IntegerVariable(9000)
	tuned["prefill_devices"] = config.ListVariable(config.IntegerVariable(3))
	tuned["decode_devices"] = config.ListVariable(config.IntegerVariable(2))
	tuned["prefill_max_num_seqs"] = config.IntegerVariable(8)
	tuned["decode_max_num_seqs"] = config.IntegerVariable(128)
	n := func(v int64) knownvalue.Check { return knownvalue.Int64Exact(v) }
	functionTest(t,
		resource.TestStep{
			Config:          module,
			ConfigVariables: vars(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownOutputValue("vllm_omni_release", knownvalue.StringExact("0.24.0")),
				plancheck.ExpectKnownOutputValue("release_problems", knownvalue.ListExact([]knownvalue.Check{})),
				plancheck.ExpectKnownOutputValue("serve_command", knownvalue.StringRegexp(regexp.MustCompile(` --stage-configs-path /etc/vllm-omni/deploy-config\.yaml --stage-id 0 --omni-master-address 127\.0\.0\.1 --omni-master-port 25203$`))),
			}},
		},
		resource.TestStep{
			Config:          module,
			ConfigVariables: vars("0.20"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("omni_pd_pipeline.this", plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownOutputValue("vllm_omni_release", knownvalue.StringExact("0.20.0")),
				plancheck.ExpectKnownOutputValue("release_problems", knownvalue.ListExact([]knownvalue.Check{})),
			}},
		},
		resource.TestStep{
			Config:          module,
			ConfigVariables: tuned,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownOutputValue("api_port", n(9000)),
				plancheck.ExpectKnownOutputValue("health", knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"port":          n(9000),
					"readiness_url": knownvalue.StringExact("http://127.0.0.1:9000/v1/models"),
				})),
				plancheck.ExpectKnownOutputValue("stages", knownvalue.ListPartial(map[int]knownvalue.Check{
					0: knownvalue.ObjectPartial(map[string]knownvalue.Check{"role": knownvalue.StringExact("prefill"), "devices": knownvalue.ListExact([]knownvalue.Check{n(3)})}),
					1: knownvalue.ObjectPartial(map[string]knownvalue.Check{"role": knownvalue.StringExact("decode"), "devices": knownvalue.ListExact([]knownvalue.Check{n(2)})}),
				})),
				plancheck.ExpectKnownOutputValue("max_num_seqs", knownvalue.ListPartial(map[int]knownvalue.Check{0: n(8), 1: n(128)})),
				plancheck.ExpectKnownOutputValue("config_sha256", knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{64}$`))),
				plancheck.ExpectKnownOutputValue("release_problems", knownvalue.ListExact([]knownvalue.Check{})),
			}},
		},
	)
}

// What the packing module plans is what its release runs: every pipeline's
// config passes that release's checks (provider functions need Terraform
// 1.8, so this is a test of its own).
func TestExampleModule_HostPackingConforms(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config: exampleModule(t, "pd-host-packing") + `
output "release_problems" { value = flatten([for p in omni_pd_pipeline.this : provider::omni::validate_stage_config(p.config_yaml, p.vllm_omni_release)]) }
`,
		ConfigVariables: config.Variables{"pipelines": config.IntegerVariable(3), "gpus": config.IntegerVariable(9)},
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectKnownOutputValue("release_problems", knownvalue.ListExact([]knownvalue.Check{})),
		}},
	})
}

// functionVersionChecks skips a test that calls a provider function on a
// CLI without them (OpenTofu 1.6, Terraform before 1.8).
func functionVersionChecks() []tfversion.TerraformVersionCheck {
	return []tfversion.TerraformVersionCheck{functionsCheck{}}
}

// functionsCheck is tfversion.SkipBelow(1.8.0) with a skip message that
// says which feature is missing.
type functionsCheck struct{}

func (functionsCheck) CheckTerraformVersion(ctx context.Context, req tfversion.CheckTerraformVersionRequest, resp *tfversion.CheckTerraformVersionResponse) {
	tfversion.SkipBelow(tfversion.Version1_8_0).CheckTerraformVersion(ctx, req, resp)
	if resp.Skip != "" {
		resp.Skip = fmt.Sprintf("provider-defined functions need Terraform 1.8 or later, and this CLI reports %s (OpenTofu 1.6 has none)", req.TerraformVersion)
	}
}
