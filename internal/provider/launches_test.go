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

	"github.com/omnipd/terraform-provider-omni/internal/presets"
)

// launches in the plan: on one host, on a release that applies no stage's
// runtime.env in a whole-pipeline process (the default, 0.24.0), one
// process per stage under a "local" key, each an instance of the one
// template unit, the head's options and environment in its drop-in;
// across hosts the same template on both machines.
func TestAccPDPipeline_LaunchProcesses(t *testing.T) {
	launch := func(i int) tfjsonpath.Path { return tfjsonpath.New("launches").AtSliceIndex(i) }
	proc := func(i, j int) tfjsonpath.Path { return launch(i).AtMapKey("processes").AtSliceIndex(j) }
	dropIn := func(i, j int) tfjsonpath.Path { return proc(i, j).AtMapKey("systemd_dropin") }
	unit := tfjsonpath.New("systemd_unit")
	accTest(t,
		resource.TestStep{
			Config: pipelineResource(),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(resAddr, launch(0).AtMapKey("host"), knownvalue.StringExact("local")),
				plancheck.ExpectKnownValue(resAddr, launch(0).AtMapKey("gpu_count"), knownvalue.Int64Exact(3)),
				plancheck.ExpectKnownValue(resAddr, launch(0).AtMapKey("processes"), knownvalue.ListSizeExact(4)),
				plancheck.ExpectKnownValue(resAddr, unit.AtMapKey("path"), knownvalue.StringExact("/etc/systemd/system/vllm-omni-stage@.service")),
				plancheck.ExpectKnownValue(resAddr, unit.AtMapKey("content"), unitLines(
					"Description=Qwen/Qwen3-Omni-30B-A3B-Instruct: vllm-omni stage %i", "User=vllm-omni", "ConditionPathExists=/etc/systemd/system/vllm-omni-stage@%i.service.d/plan.conf")),
				plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("stage_id"), knownvalue.Int64Exact(0)),
				plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("role"), knownvalue.StringExact("head")),
				plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("unit_name"), knownvalue.StringExact("vllm-omni-stage@0.service")),
				plancheck.ExpectKnownValue(resAddr, dropIn(0, 0), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"path": knownvalue.StringExact("/etc/systemd/system/vllm-omni-stage@0.service.d/plan.conf"),
					// Each side's NIXL port reaches it only as its process's
					// own environment.
					// It starts its host's stages with it.
					"content": knownvalue.StringExact("[Unit]\n" +
						"Wants=vllm-omni-stage@1.service vllm-omni-stage@2.service vllm-omni-stage@3.service\n\n" +
						"[Service]\n" +
						`Environment="OMNI_PD_CHECKS=--gpus 1 --transport NixlConnector=nixl._api"` + "\n" +
						`Environment="OMNI_PD_STAGE_ARGS=--port 8091"` + "\n" +
						`Environment="VLLM_NIXL_SIDE_CHANNEL_PORT=25201"` + "\n"),
				})),
				plancheck.ExpectKnownValue(resAddr, proc(0, 1).AtMapKey("role"), knownvalue.StringExact("headless")),
				plancheck.ExpectKnownValue(resAddr, proc(0, 1).AtMapKey("unit_name"), knownvalue.StringExact("vllm-omni-stage@1.service")),
				// A headless process beside the head starts after it, and
				// stops, fails and restarts with it.
				plancheck.ExpectKnownValue(resAddr, dropIn(0, 1).AtMapKey("content"), unitLines(
					"[Unit]", "After=vllm-omni-stage@0.service", "BindsTo=vllm-omni-stage@0.service",
					`Environment="OMNI_PD_STAGE_ARGS=--headless"`, `Environment="VLLM_NIXL_SIDE_CHANNEL_PORT=25202"`)),
				plancheck.ExpectKnownValue(resAddr, proc(0, 3).AtMapKey("stage_id"), knownvalue.Int64Exact(3)),
				plancheck.ExpectKnownValue(resAddr, dropIn(0, 3).AtMapKey("content"), stringWithout("VLLM_NIXL")),
			}},
		},
		resource.TestStep{
			Config: pipelineResource(`prefill = { host = "10.0.0.1" }`, `decode = { host = "10.0.0.2" }`,
				`systemd = { user = "omni", unit_prefix = "qwen", vllm_path = "/opt/v/bin/vllm", head_wait_seconds = 120 }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, launch(1).AtMapKey("host"), knownvalue.StringExact("10.0.0.2")),
				// Decode and the stages after it move to a new host: they take
				// its GPUs 0 and 1, not the 1 and 2 they had on the first
				// machine, so that host needs two.
				plancheck.ExpectKnownValue(resAddr, launch(1).AtMapKey("gpu_count"), knownvalue.Int64Exact(2)),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(2)),
				plancheck.ExpectKnownValue(resAddr, proc(1, 0).AtMapKey("stage_id"), knownvalue.Int64Exact(1)),
				plancheck.ExpectKnownValue(resAddr, proc(1, 0).AtMapKey("unit_name"), knownvalue.StringExact("qwen-stage@1.service")),
				// The head is on the other machine: no ordering after it
				// here, its own address for its peers, the host's IP.
				plancheck.ExpectKnownValue(resAddr, dropIn(1, 0).AtMapKey("content"), allOfChecks(stringWithout("After="), unitLines(
					`Environment="OMNI_PD_STAGE_ARGS=--headless --omni-replica-address 10.0.0.2"`, `Environment="VLLM_HOST_IP=10.0.0.2"`))),
				// Every machine's template waits for the head's master at its
				// address.
				plancheck.ExpectKnownValue(resAddr, unit.AtMapKey("content"), knownvalue.StringRegexp(regexp.MustCompile(
					`(?m)^ExecStart=.* --head 10\.0\.0\.1:\d+ --head-wait 120 --head-unit qwen-stage@0\.service \$OMNI_PD_CHECKS -- /opt/v/bin/vllm serve `))),
				plancheck.ExpectKnownValue(resAddr, proc(1, 2).AtMapKey("stage_id"), knownvalue.Int64Exact(3)),
				plancheck.ExpectKnownValue(resAddr, proc(0, 0).AtMapKey("role"), knownvalue.StringExact("head")),
			}},
		},
		resource.TestStep{
			Config: pipelineResource(`prefill = { host = "10.0.0.1" }`, `decode = { host = "10.0.0.2" }`,
				`systemd = { user = "omni", unit_prefix = "qwen", vllm_path = "/opt/v/bin/vllm", head_wait_seconds = 120 }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}

// On the releases that apply each stage's runtime.env in a whole-pipeline
// process (0.22.0 and 0.23.0rc1), one host still runs one process with
// every stage and every GPU: its unit is <prefix>.service, complete, with
// no drop-in, its stage_id null, and its command serve_command, without
// stage flags or an omni master.
func TestAccPDPipeline_LaunchWholePipeline(t *testing.T) {
	launch := tfjsonpath.New("launches").AtSliceIndex(0)
	proc := launch.AtMapKey("processes").AtSliceIndex(0)
	for _, version := range []string{"0.22.0", "0.23.0rc1"} {
		t.Run(version, func(t *testing.T) {
			serve := knownvalue.StringExact("vllm serve " + seedModel + " --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml")
			accTest(t, resource.TestStep{
				Config: pipelineResource(`vllm_omni_version = "` + version + `"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact(version)),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("serve_command"), serve),
					plancheck.ExpectKnownValue(resAddr, launch.AtMapKey("host"), knownvalue.StringExact("local")),
					plancheck.ExpectKnownValue(resAddr, launch.AtMapKey("processes"), knownvalue.ListSizeExact(1)),
					plancheck.ExpectKnownValue(resAddr, proc.AtMapKey("stage_id"), knownvalue.Null()),
					plancheck.ExpectKnownValue(resAddr, proc.AtMapKey("role"), knownvalue.StringExact("head")),
					plancheck.ExpectKnownValue(resAddr, proc.AtMapKey("unit_name"), knownvalue.StringExact("vllm-omni.service")),
					plancheck.ExpectKnownValue(resAddr, proc.AtMapKey("systemd_dropin"), knownvalue.Null()),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("systemd_unit").AtMapKey("path"), knownvalue.StringExact("/etc/systemd/system/vllm-omni.service")),
					// The release sets each stage's runtime.env itself; the one
					// process checks every GPU of the host.
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("systemd_unit").AtMapKey("content"), allOfChecks(stringWithout("VLLM_NIXL"), knownvalue.StringRegexp(regexp.MustCompile(
						`(?m)^ExecStart=/usr/bin/env python3 /usr/local/lib/vllm-omni/pd-check\.py preflight `+regexp.QuoteMeta(version)+` release \S+ /etc/vllm-omni/deploy-config\.yaml [0-9a-f]{64} --gpus 3 .* -- /usr/local/bin/vllm serve `+
							regexp.QuoteMeta(seedModel)+` --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config\.yaml$`)))),
				}},
			})
		})
	}
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
	accTest(t,
		resource.TestStep{Config: config},
		resource.TestStep{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		resource.TestStep{
			// An update elsewhere keeps every stage where it was.
			Config: strings.Replace(config, "max_num_seqs = 8", "max_num_seqs = 4", 1),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages").AtSliceIndex(1).AtMapKey("devices"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.Int64Exact(1)})),
			}},
		},
	)
}

// NIXL's handshake listener is one per engine, at
// VLLM_NIXL_SIDE_CHANNEL_PORT plus the engine's data-parallel index: each
// side gets one port per data-parallel rank, named <side>_side_channel, with
// _dp<N> only when there are several. Tensor parallelism adds none. The PD
// pair's ports come first in the range, then the omni master.
func TestAccPDPipeline_NixlSideChannelPorts(t *testing.T) {
	port := func(name string, n int64, stage knownvalue.Check) knownvalue.Check {
		return knownvalue.ObjectExact(map[string]knownvalue.Check{
			"name": knownvalue.StringExact(name), "port": knownvalue.Int64Exact(n), "stage_id": stage, "host": knownvalue.Null(),
		})
	}
	zero, one := knownvalue.Int64Exact(0), knownvalue.Int64Exact(1)
	proc := func(j int) tfjsonpath.Path {
		return tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(j)
	}
	dataSource := func(lines ...string) string {
		return `
data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + strings.Join(lines, "\n  ") + `
}
`
	}
	accTest(t,
		resource.TestStep{
			Config: dataSource(`prefill = { tensor_parallel_size = 2 }`, `decode = { tensor_parallel_size = 2 }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("ports"), knownvalue.ListExact([]knownvalue.Check{
					port("api", 8091, knownvalue.Null()),
					port("prefill_side_channel", 25201, zero),
					port("decode_side_channel", 25202, one),
					port("omni_master", 25203, knownvalue.Null()),
				})),
			},
		},
		resource.TestStep{
			Config: dataSource(`prefill = { engine_args = { data_parallel_size = 2 } }`, `decode = { engine_args = { data_parallel_size = 2 } }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("ports"), knownvalue.ListExact([]knownvalue.Check{
					port("api", 8091, knownvalue.Null()),
					port("prefill_side_channel_dp0", 25201, zero),
					port("prefill_side_channel_dp1", 25202, zero),
					port("decode_side_channel_dp0", 25203, one),
					port("decode_side_channel_dp1", 25204, one),
					port("omni_master", 25205, knownvalue.Null()),
				})),
				// The port the peer dials, and the one the environment
				// names, is the block's first.
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("prefill").AtMapKey("bootstrap_port"), knownvalue.Int64Exact(25201)),
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New("decode").AtMapKey("bootstrap_port"), knownvalue.Int64Exact(25203)),
				statecheck.ExpectKnownValue(dataAddr, proc(0).AtMapKey("systemd_dropin").AtMapKey("content"), unitLines(`Environment="VLLM_NIXL_SIDE_CHANNEL_PORT=25201"`)),
				statecheck.ExpectKnownValue(dataAddr, proc(1).AtMapKey("systemd_dropin").AtMapKey("content"), unitLines(`Environment="VLLM_NIXL_SIDE_CHANNEL_PORT=25203"`)),
			},
		},
	)
}
