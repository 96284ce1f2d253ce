package provider

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const resAddr = "omni_pd_pipeline.test"

// pipelineResource renders a resource block with model = seedModel plus the
// given attribute lines.
func pipelineResource(lines ...string) string {
	return `
resource "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + strings.Join(lines, "\n  ") + `
}
`
}

// wrapRE matches text that Terraform may have wrapped across lines.
func wrapRE(text string) *regexp.Regexp {
	return regexp.MustCompile(strings.Join(strings.Fields(regexp.QuoteMeta(text)), `\s+`))
}

// Every output is known in the plan (not "known after apply") and matches
// the recipe; a second plan after apply is empty.
func TestAccPDPipelineResource_KnownAtPlan(t *testing.T) {
	accTest(t,
		resource.TestStep{
			Config: pipelineResource(),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: append(seedPlanChecks(resAddr),
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"),
						knownvalue.StringRegexp(regexp.MustCompile(`(?s)stage_args:.*kv_producer.*kv_consumer`))),
				),
			},
			ConfigStateChecks: seedStateChecks(resAddr),
			Check:             checkSeedConfigYAML(resAddr),
		},
		resource.TestStep{
			Config: pipelineResource(),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
	)
}

// An input that is unknown at plan time (here the model, and a value deep
// inside engine_args) leaves every output unknown, without an error.
func TestAccPDPipelineResource_UnknownInput(t *testing.T) {
	accTest(t,
		resource.TestStep{
			Config: `
resource "terraform_data" "model" {
  input = "` + seedModel + `"
}

resource "omni_pd_pipeline" "test" {
  model = terraform_data.model.output
}
`,
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: unknownOutputChecks(resAddr)},
			ConfigStateChecks: seedStateChecks(resAddr),
		},
		resource.TestStep{
			Config: `
resource "terraform_data" "tokens" {
  input = 8192
}
` + pipelineResource(`prefill = { engine_args = { max_num_batched_tokens = terraform_data.tokens.output } }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: unknownOutputChecks(resAddr)},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"),
					knownvalue.StringRegexp(regexp.MustCompile(`max_num_batched_tokens: 8192\b`))),
			},
		},
	)
}

// Inputs update in place and keep the allocations; triggers replace.
func TestAccPDPipelineResource_UpdateAndReplace(t *testing.T) {
	ports := statecheck.CompareValue(compare.ValuesSame())
	stages := statecheck.CompareValue(compare.ValuesSame())
	yamls := statecheck.CompareValue(compare.ValuesDiffer())
	accTest(t,
		resource.TestStep{
			Config: pipelineResource(`triggers = { rev = "1" }`),
			ConfigStateChecks: []statecheck.StateCheck{
				ports.AddStateValue(resAddr, tfjsonpath.New("ports")),
				stages.AddStateValue(resAddr, tfjsonpath.New("stages")),
				yamls.AddStateValue(resAddr, tfjsonpath.New("config_yaml")),
			},
		},
		resource.TestStep{
			Config: pipelineResource(`triggers = { rev = "1" }`, `decode = { max_num_seqs = 32 }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"),
					knownvalue.StringRegexp(regexp.MustCompile(`max_num_seqs: 32\b`))),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				ports.AddStateValue(resAddr, tfjsonpath.New("ports")),
				stages.AddStateValue(resAddr, tfjsonpath.New("stages")),
				yamls.AddStateValue(resAddr, tfjsonpath.New("config_yaml")),
			},
		},
		resource.TestStep{
			Config: pipelineResource(`triggers = { rev = "2" }`, `decode = { max_num_seqs = 32 }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionDestroyBeforeCreate),
				// Still known at plan time on a replacement.
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages"), knownvalue.ListSizeExact(4)),
			}},
		},
	)
}

// A change that would move fresh allocations (a new port_range that still
// contains the old ports) keeps the resource's ports, while the data source,
// which has no memory, moves. Replacing the resource allocates afresh.
func TestAccPDPipelineResource_StablePorts(t *testing.T) {
	const dsAddr = "data.omni_pd_pipeline.test"
	rangeLine := `port_range = { first = 25101, last = 25300 }`
	// Both entities get the same inputs; triggers exist on the resource only.
	withDataSource := func(triggers string, lines ...string) string {
		return pipelineResource(append(lines, triggers)...) + `
data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + strings.Join(lines, "\n  ") + `
}
`
	}
	bootstrap := func(addr string, stage int, port int64) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(addr,
			tfjsonpath.New("stages").AtSliceIndex(stage).AtMapKey("bootstrap_port"), knownvalue.Int64Exact(port))
	}
	ports := statecheck.CompareValue(compare.ValuesSame())
	accTest(t,
		resource.TestStep{
			Config: withDataSource(""),
			ConfigStateChecks: []statecheck.StateCheck{
				ports.AddStateValue(resAddr, tfjsonpath.New("ports")),
				bootstrap(resAddr, 0, 25201), bootstrap(resAddr, 1, 25202),
			},
		},
		resource.TestStep{
			Config: withDataSource("", rangeLine),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				ports.AddStateValue(resAddr, tfjsonpath.New("ports")),
				bootstrap(resAddr, 0, 25201), bootstrap(resAddr, 1, 25202),
				bootstrap(dsAddr, 0, 25101), bootstrap(dsAddr, 1, 25102),
			},
		},
		resource.TestStep{
			Config: withDataSource(`triggers = { rev = "2" }`, rangeLine),
			ConfigStateChecks: []statecheck.StateCheck{
				bootstrap(resAddr, 0, 25101), bootstrap(resAddr, 1, 25102),
				statecheck.CompareValuePairs(resAddr, tfjsonpath.New("ports"), dsAddr, tfjsonpath.New("ports"), compare.ValuesSame()),
			},
		},
	)
}

// Bad input fails the plan with an error that names the problem. Engine
// errors carry their stable code in brackets.
func TestAccPDPipelineResource_InvalidInput(t *testing.T) {
	cases := map[string]struct {
		lines []string
		err   *regexp.Regexp
	}{
		"tp mismatch with the default connector": {
			[]string{`prefill = { tensor_parallel_size = 1 }`, `decode = { tensor_parallel_size = 2 }`},
			regexp.MustCompile(`\[tp_mismatch\]`),
		},
		"too few gpus for the seed layout": {
			[]string{`gpus = 2`},
			regexp.MustCompile(`\[gpus_exceeded\]`),
		},
		"prefill and decode share a device": {
			[]string{`prefill = { devices = [0] }`, `decode = { devices = [0] }`},
			regexp.MustCompile(`\[pd_devices_overlap\]`),
		},
		"unknown stage_overrides key": {
			[]string{`stage_overrides = { talker = { max_num_seq = 8 } }`},
			regexp.MustCompile(`\[stage_overrides_unknown_key\]`),
		},
		"stage_overrides for a stage that does not exist": {
			[]string{`stage_overrides = { vocoder = { max_num_seqs = 8 } }`},
			regexp.MustCompile(`\[override_unknown_stage\]`),
		},
		"base_config is not YAML": {
			[]string{`base_config = "stage_args: [unclosed"`},
			regexp.MustCompile(`\[base_config_invalid\]`),
		},
		"preset conflicts with base_config": {
			[]string{`preset = "qwen3_omni_moe"`, `base_config = "stage_args: []"`},
			wrapRE("Invalid Attribute Combination"),
		},
		"bad format": {
			[]string{`format = "yaml"`},
			wrapRE("Invalid Attribute Value Match"),
		},
		"bad connector protocol": {
			[]string{`connector = { protocol = "udp" }`},
			wrapRE("Invalid Attribute Value Match"),
		},
		"port out of range": {
			[]string{`api_port = 70000`},
			wrapRE("Attribute api_port value must be between 1 and 65535"),
		},
		"tensor_parallel_size zero": {
			[]string{`decode = { tensor_parallel_size = 0 }`},
			wrapRE("decode.tensor_parallel_size value must be at least 1"),
		},
		"gpu_memory_utilization zero": {
			[]string{`prefill = { gpu_memory_utilization = 0 }`},
			wrapRE("must be greater than 0 and at most 1"),
		},
		"negative device": {
			[]string{`prefill = { devices = [-1] }`},
			wrapRE("value must be at least 0"),
		},
		"repeated device": {
			[]string{`decode = { devices = [1, 1] }`},
			wrapRE("decode.devices lists GPU 1 a second time"),
		},
		"port_range inverted": {
			[]string{`port_range = { first = 30000, last = 29000 }`},
			wrapRE("port_range.last (29000) is below port_range.first (30000)"),
		},
		"stage_overrides not an object": {
			[]string{`stage_overrides = ["talker"]`},
			wrapRE("stage_overrides must be an object"),
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			accTest(t, resource.TestStep{
				Config:      pipelineResource(c.lines...),
				ExpectError: c.err,
			})
		})
	}
}

// terraform import (and an import block) answers with what to do instead,
// in the provider's words.
func TestAccPDPipelineResource_Import(t *testing.T) {
	accTest(t, resource.TestStep{
		Config:        pipelineResource(),
		ResourceName:  resAddr,
		ImportState:   true,
		ImportStateId: "anything",
		ExpectError:   regexp.MustCompile(`(?s)omni_pd_pipeline\s+cannot\s+be\s+imported.*Declare\s+the\s+resource\s+instead.*set\s+api_port`),
	})
}

// hostChangeChecks are the plan checks of an update that changes hosts:
// an update in place, each stage's devices and bootstrap_port, and each
// host's gpu_count, in launch order.
func hostChangeChecks(devices [][]int64, bootstrap []int64, gpus map[string]int64) []plancheck.PlanCheck {
	checks := []plancheck.PlanCheck{plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate)}
	for i, devs := range devices {
		var want []knownvalue.Check
		for _, d := range devs {
			want = append(want, knownvalue.Int64Exact(d))
		}
		checks = append(checks, plancheck.ExpectKnownValue(resAddr,
			tfjsonpath.New("stages").AtSliceIndex(i).AtMapKey("devices"), knownvalue.ListExact(want)))
	}
	for i, port := range bootstrap {
		checks = append(checks, plancheck.ExpectKnownValue(resAddr,
			tfjsonpath.New("stages").AtSliceIndex(i).AtMapKey("bootstrap_port"), knownvalue.Int64Exact(port)))
	}
	var launches []knownvalue.Check
	for _, host := range sortedHostKeys(gpus) {
		launches = append(launches, knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"host": knownvalue.StringExact(host), "gpu_count": knownvalue.Int64Exact(gpus[host]),
		}))
	}
	return append(checks, plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("launches"), knownvalue.ListExact(launches)))
}

// sortedHostKeys lists the hosts in address order, which is launch order in
// these tests (each host's first stage comes after the one before's).
func sortedHostKeys(m map[string]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Adding a host to a one-host pipeline keeps the head's ports and GPUs;
// decode and the stages after it, moved to the new host, take that host's
// lowest free ones (GPUs 0 and 1 there, not the 1 and 2 they had on the
// first machine). The next plan is empty.
func TestAccPDPipelineResource_AddHost(t *testing.T) {
	hosts := []string{`prefill = { host = "10.0.0.1" }`, `decode = { host = "10.0.0.2" }`}
	accTest(t,
		resource.TestStep{Config: pipelineResource()},
		resource.TestStep{
			Config: pipelineResource(hosts...),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: hostChangeChecks(
				[][]int64{{0}, {0}, {1}, {1}}, []int64{25201, 25201},
				map[string]int64{"10.0.0.1": 1, "10.0.0.2": 2})},
		},
		resource.TestStep{
			Config:           pipelineResource(hosts...),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}

// Moving talker and code2wav to a new host gives them its GPU 0, not the
// GPU 1 they had beside decode: a one-GPU machine needs gpu_count 1. The
// ports that stay on their hosts stay, and the next plan is empty.
func TestAccPDPipelineResource_MoveStagesToNewHost(t *testing.T) {
	two := []string{`prefill = { host = "10.0.0.1" }`, `decode = { host = "10.0.0.2" }`}
	three := append(append([]string(nil), two...),
		`stage_overrides = { talker = { host = "10.0.0.3" }, code2wav = { host = "10.0.0.3" } }`)
	ports := statecheck.CompareValue(compare.ValuesSame())
	portOf := func(i int) statecheck.StateCheck {
		return ports.AddStateValue(resAddr, tfjsonpath.New("ports").AtSliceIndex(i))
	}
	accTest(t,
		resource.TestStep{Config: pipelineResource(two...), ConfigStateChecks: []statecheck.StateCheck{portOf(1)}},
		resource.TestStep{
			Config: pipelineResource(three...),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: hostChangeChecks(
				[][]int64{{0}, {0}, {0}, {0}}, []int64{25201, 25201},
				map[string]int64{"10.0.0.1": 1, "10.0.0.2": 1, "10.0.0.3": 1})},
			ConfigStateChecks: []statecheck.StateCheck{portOf(1)},
		},
		resource.TestStep{
			Config:           pipelineResource(three...),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}
