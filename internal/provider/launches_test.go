package provider

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
)

// launches in the plan: on one host one process with the pipeline's command
// and a "local" key; across hosts one process per stage, each with its unit,
// and no single command where a host runs several.
func TestAccPDPipeline_LaunchProcesses(t *testing.T) {
	launch := func(i int) tfjsonpath.Path { return tfjsonpath.New("launches").AtSliceIndex(i) }
	proc := func(i, j int) tfjsonpath.Path { return launch(i).AtMapKey("processes").AtSliceIndex(j) }
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: pipelineResource(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(resAddr, launch(0).AtMapKey("host"), knownvalue.StringExact("local")),
					plancheck.ExpectKnownValue(resAddr, launch(0).AtMapKey("gpu_count"), knownvalue.Int64Exact(3)),
					plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("stage_id"), knownvalue.Null()),
					plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("role"), knownvalue.StringExact("head")),
					plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("unit_name"), knownvalue.StringExact("vllm-omni.service")),
					plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("systemd_unit"), knownvalue.StringRegexp(regexp.MustCompile(`(?m)^User=vllm-omni$`))),
					plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("devices"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.Int64Exact(0), knownvalue.Int64Exact(1), knownvalue.Int64Exact(2)})),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs(resAddr, launch(0).AtMapKey("command"), resAddr, tfjsonpath.New("serve_command"), compare.ValuesSame()),
					statecheck.CompareValuePairs(resAddr, proc(0, 0).AtMapKey("command"), resAddr, tfjsonpath.New("serve_command"), compare.ValuesSame()),
				},
			},
			{
				Config: pipelineResource(`prefill = { host = "10.0.0.1" }`, `decode = { host = "10.0.0.2" }`,
					`systemd = { user = "omni", unit_prefix = "qwen", vllm_path = "/opt/v/bin/vllm", head_wait_seconds = 120 }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, launch(1).AtMapKey("host"), knownvalue.StringExact("10.0.0.2")),
					plancheck.ExpectKnownValue(resAddr, launch(1).AtMapKey("argv"), knownvalue.Null()),
					plancheck.ExpectKnownValue(resAddr, launch(1).AtMapKey("command"), knownvalue.Null()),
					// The update keeps the GPUs of step 1 (decode on 1, the others
					// on 2), so that host needs three.
					plancheck.ExpectKnownValue(resAddr, launch(1).AtMapKey("gpu_count"), knownvalue.Int64Exact(3)),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(3)),
					plancheck.ExpectKnownValue(resAddr, proc(1, 0).AtMapKey("stage_id"), knownvalue.Int64Exact(1)),
					plancheck.ExpectKnownValue(resAddr, proc(1, 0).AtMapKey("role"), knownvalue.StringExact("headless")),
					plancheck.ExpectKnownValue(resAddr, proc(1, 0).AtMapKey("unit_name"), knownvalue.StringExact("qwen-stage-1.service")),
					plancheck.ExpectKnownValue(resAddr, proc(1, 0).AtMapKey("env").AtMapKey("VLLM_HOST_IP"), knownvalue.StringExact("10.0.0.2")),
					plancheck.ExpectKnownValue(resAddr, proc(1, 0).AtMapKey("ports").AtSliceIndex(0).AtMapKey("name"), knownvalue.StringExact("decode_bootstrap")),
					plancheck.ExpectKnownValue(resAddr, proc(1, 0).AtMapKey("systemd_unit"), knownvalue.StringRegexp(regexp.MustCompile(
						`(?m)^ExecStartPre=/bin/bash -c .* wait-for-head 10\.0\.0\.1 \d+ 120 qwen-stage-0\.service$`))),
					plancheck.ExpectKnownValue(resAddr, proc(1, 2).AtMapKey("stage_id"), knownvalue.Int64Exact(3)),
					plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("role"), knownvalue.StringExact("head")),
				}},
			},
			{
				Config: pipelineResource(`prefill = { host = "10.0.0.1" }`, `decode = { host = "10.0.0.2" }`,
					`systemd = { user = "omni", unit_prefix = "qwen", vllm_path = "/opt/v/bin/vllm", head_wait_seconds = 120 }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// A downstream stage whose model_stage is "decode" keeps its own devices
// and leaves the pair theirs: the resource settles, the next plan is empty.
func TestAccPDPipelineResource_SettlesWithStageNamedDecode(t *testing.T) {
	src, err := presets.Source(presets.Qwen3OmniMoe)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(src), "model_stage: code2wav", "model_stage: decode", 1)
	config := pipelineResource("base_config = <<-EOT\n"+base+"EOT\n", `prefill = { max_num_seqs = 8 }`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{Config: config},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				// An update elsewhere keeps every stage where it was.
				Config: strings.Replace(config, "max_num_seqs = 8", "max_num_seqs = 4", 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages").AtSliceIndex(1).AtMapKey("devices"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.Int64Exact(1)})),
				}},
			},
		},
	})
}
