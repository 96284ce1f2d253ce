package provider

import (
	"slices"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// processDataHosts puts the pipeline on three machines: prefill, decode
// with the talker, and code2wav, so that a process holds the edge
// connector's port as well as its side channel's.
const processDataHosts = `prefill = { host = "10.0.0.1" }
  decode  = { host = "10.0.0.2" }
  stage_overrides = { code2wav = { host = "10.0.0.3" } }`

// processDataPlan is the engine's plan of processDataHosts.
func processDataPlan(t *testing.T) *pipeline.Result {
	t.Helper()
	res, diags := pipeline.Plan(pipeline.Spec{Model: seedModel,
		Prefill: pipeline.RoleSpec{Host: "10.0.0.1"}, Decode: pipeline.RoleSpec{Host: "10.0.0.2"},
		StageOverrides: map[string]pipeline.StageOverride{"code2wav": {Host: "10.0.0.3"}}})
	if diags.HasErrors() {
		t.Fatalf("the engine's plan fails: %v", diags)
	}
	return res
}

// Each process's argv, env, devices and ports are known in the plan and
// are the engine's, for the resource and the data source alike, across
// three hosts; the head's argv is serve_args; a second plan is empty.
func TestAccPDPipeline_ProcessData(t *testing.T) {
	res := processDataPlan(t)
	if len(res.Launches) != 3 {
		t.Fatalf("the engine plans %d launches, want one on each of three hosts", len(res.Launches))
	}
	var planChecks []plancheck.PlanCheck
	var stateChecks []statecheck.StateCheck
	for i, l := range res.Launches {
		for j := range l.Processes {
			for name, check := range processDataChecks(&l.Processes[j]) {
				path := tfjsonpath.New("launches").AtSliceIndex(i).AtMapKey("processes").AtSliceIndex(j).AtMapKey(name)
				planChecks = append(planChecks, plancheck.ExpectKnownValue(resAddr, path, check))
				stateChecks = append(stateChecks, statecheck.ExpectKnownValue(dataAddr, path, check))
			}
		}
	}
	head := tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(0).AtMapKey("argv")
	planChecks = append(planChecks, plancheck.ExpectKnownValue(resAddr, head, stringList(res.ServeArgs)))
	config := both(processDataHosts)
	accTest(t,
		resource.TestStep{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: planChecks}, ConfigStateChecks: stateChecks},
		resource.TestStep{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	)
}

// While an input is unknown, launches (and so each process's values) is
// unknown as a whole; once it is known, they are.
func TestAccPDPipeline_ProcessDataUnknown(t *testing.T) {
	config := `
resource "terraform_data" "host" { input = "10.0.0.1" }

resource "omni_pd_pipeline" "test" {
  model   = "` + seedModel + `"
  prefill = { host = terraform_data.host.output }
  decode  = { host = "10.0.0.2" }
}`
	argv := tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(0).AtMapKey("argv")
	accTest(t,
		resource.TestStep{
			Config:            config,
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("launches"))}},
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(resAddr, argv, knownvalue.ListSizeExact(14))},
		},
		resource.TestStep{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
				plancheck.ExpectKnownValue(resAddr, argv.AtSliceIndex(11), knownvalue.StringExact("10.0.0.1")),
			}},
		},
	)
}

// processDataChecks are the exact values a process's runner attributes
// must hold: the engine's.
func processDataChecks(p *pipeline.Process) map[string]knownvalue.Check {
	env := map[string]knownvalue.Check{}
	for k, v := range p.Env {
		env[k] = knownvalue.StringExact(v)
	}
	devices := make([]knownvalue.Check, len(p.Devices))
	for i, d := range p.Devices {
		devices[i] = knownvalue.Int64Exact(int64(d))
	}
	ports := make([]knownvalue.Check, len(p.Ports))
	for i, port := range p.Ports {
		ports[i] = knownvalue.ObjectExact(map[string]knownvalue.Check{
			"name": knownvalue.StringExact(port.Name), "port": knownvalue.Int64Exact(int64(port.Port))})
	}
	return map[string]knownvalue.Check{
		"stage_id": knownvalue.Int64Exact(int64(*p.StageID)),
		"argv":     stringList(p.Argv),
		"env":      knownvalue.MapExact(env),
		"devices":  knownvalue.ListExact(devices),
		"ports":    knownvalue.ListExact(ports),
	}
}

func stringList(words []string) knownvalue.Check {
	checks := make([]knownvalue.Check, len(words))
	for i, w := range words {
		checks[i] = knownvalue.StringExact(w)
	}
	return knownvalue.ListExact(checks)
}

// The engine's values the test compares with are the ones it should: the
// three hosts' processes hold a side channel, the talker's edge port and
// VLLM_HOST_IP, and every process but the head runs headless.
func TestProcessDataPlan(t *testing.T) {
	res := processDataPlan(t)
	talker := res.Launches[1].Processes[1]
	edge := slices.ContainsFunc(talker.Ports, func(p pipeline.NamedPort) bool { return p.Name == "edge_2_3" })
	if !edge || talker.Env["VLLM_HOST_IP"] != "10.0.0.2" {
		t.Errorf("the talker's process has ports %v and env %v, want edge_2_3 and VLLM_HOST_IP=10.0.0.2", talker.Ports, talker.Env)
	}
	for i, l := range res.Launches {
		for j, p := range l.Processes {
			if headless := i != 0 || j != 0; headless != (p.Argv[4] == "--headless") {
				t.Errorf("launch %d process %d runs %q", i, j, p.Argv)
			}
			if p.Argv[len(p.Argv)-5] != strconv.Itoa(*p.StageID) {
				t.Errorf("launch %d process %d runs %q, not its stage %d", i, j, p.Argv, *p.StageID)
			}
		}
	}
}
