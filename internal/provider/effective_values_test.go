package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// The nested inputs with defaults read back what the plan used, on the
// data source and the resource, known at plan: unset objects whole, and the
// unset fields of objects the user wrote, whose own fields read back
// exactly as written.
func TestAccPDPipeline_NestedEffectiveValues(t *testing.T) {
	at := func(name string, keys ...string) tfjsonpath.Path {
		p := tfjsonpath.New(name)
		for _, k := range keys {
			p = p.AtMapKey(k)
		}
		return p
	}
	num := func(n int64) knownvalue.Check { return knownvalue.Int64Exact(n) }
	nums := func(ns ...int64) knownvalue.Check {
		out := make([]knownvalue.Check, len(ns))
		for i, n := range ns {
			out[i] = num(n)
		}
		return knownvalue.ListExact(out)
	}
	type want struct {
		path  tfjsonpath.Path
		check knownvalue.Check
	}
	defaults := []want{
		{at("prefill", "devices"), nums(0)},
		{at("prefill", "tensor_parallel_size"), num(1)},
		{at("prefill", "max_num_seqs"), num(16)},
		{at("prefill", "bootstrap_port"), num(25201)},
		{at("prefill", "gpu_memory_utilization"), knownvalue.Null()},
		{at("prefill", "host"), knownvalue.Null()},
		{at("prefill", "engine_args"), knownvalue.Null()},
		{at("decode", "devices"), nums(1)},
		{at("decode", "tensor_parallel_size"), num(1)},
		{at("decode", "max_num_seqs"), num(64)},
		{at("decode", "bootstrap_port"), num(25202)},
		{at("connector", "name"), knownvalue.StringExact("NixlConnector")},
		{at("connector", "protocol"), knownvalue.Null()},
		{at("connector", "kv_both"), knownvalue.Null()},
		{at("port_range", "first"), num(25201)},
		{at("port_range", "last"), num(25300)},
	}
	partly := `prefill = { max_num_seqs = 8, gpu_memory_utilization = 0.85 }
  decode = { devices = [3], tensor_parallel_size = 1 }
  connector = { kv_both = true }
  port_range = { first = 30000, last = 30010 }`
	written := []want{
		{at("prefill", "devices"), nums(0)},
		{at("prefill", "tensor_parallel_size"), num(1)},
		{at("prefill", "max_num_seqs"), num(8)},
		{at("prefill", "bootstrap_port"), num(30000)},
		{at("prefill", "gpu_memory_utilization"), knownvalue.Float64Exact(0.85)},
		{at("decode", "devices"), nums(3)},
		{at("decode", "max_num_seqs"), num(64)},
		{at("decode", "bootstrap_port"), num(30001)},
		// The connector the user left unset reads back as planned, the
		// setting written as written. (protocol, the old field of this
		// case, is MooncakeConnector's only, which fails the handoff gate.)
		{at("connector", "name"), knownvalue.StringExact("NixlConnector")},
		{at("connector", "kv_both"), knownvalue.Bool(true)},
		{at("connector", "protocol"), knownvalue.Null()},
		{at("port_range", "first"), num(30000)},
		{at("port_range", "last"), num(30010)},
	}
	planChecks := func(ws []want) []plancheck.PlanCheck {
		var out []plancheck.PlanCheck
		for _, w := range ws {
			out = append(out, plancheck.ExpectKnownValue(resAddr, w.path, w.check))
		}
		return out
	}
	stateChecks := func(ws []want) []statecheck.StateCheck {
		var out []statecheck.StateCheck
		for _, w := range ws {
			out = append(out, statecheck.ExpectKnownValue(dataAddr, w.path, w.check), statecheck.ExpectKnownValue(resAddr, w.path, w.check))
		}
		return out
	}
	accTest(t,
		resource.TestStep{
			Config:            both(""),
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: planChecks(defaults)},
			ConfigStateChecks: stateChecks(defaults),
		},
		resource.TestStep{
			Config:           both(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
			Config: both(partly),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(planChecks(written),
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate))},
			ConfigStateChecks: stateChecks(written),
		},
		resource.TestStep{
			Config:           both(partly),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
			// Unset again: back to what the plan chooses, with the
			// resource keeping the devices it had.
			Config: both(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, at("prefill", "max_num_seqs"), num(16)),
				plancheck.ExpectKnownValue(resAddr, at("port_range", "first"), num(25201)),
			}},
		},
	)
}

// While an input is unknown, the nested computed fields the configuration
// leaves unset are unknown too, and what it sets stays known.
func TestAccPDPipelineResource_NestedEffectiveValuesUnknown(t *testing.T) {
	accTest(t, resource.TestStep{
		Config: `
resource "terraform_data" "host" { input = "10.0.0.1" }

resource "omni_pd_pipeline" "test" {
  model   = "` + seedModel + `"
  prefill = { host = terraform_data.host.output, max_num_seqs = 8 }
  decode  = { host = "10.0.0.2" }
}`,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("prefill").AtMapKey("devices")),
			plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("prefill").AtMapKey("bootstrap_port")),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("prefill").AtMapKey("max_num_seqs"), knownvalue.Int64Exact(8)),
			plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("decode").AtMapKey("devices")),
			plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("decode").AtMapKey("host"), knownvalue.StringExact("10.0.0.2")),
			plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("connector")),
			plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("port_range")),
		}},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("prefill").AtMapKey("devices"), knownvalue.ListExact([]knownvalue.Check{knownvalue.Int64Exact(0)})),
		},
	})
}

// The wiring the docs show: an effective value feeds another resource
// directly, with no null where a default applies.
func TestAccPDPipeline_EffectiveValuesFeedOtherResources(t *testing.T) {
	accTest(t, resource.TestStep{
		Config: both("") + `
output "firewall" {
  value = [for p in [omni_pd_pipeline.test.prefill.bootstrap_port, omni_pd_pipeline.test.decode.bootstrap_port] : "allow tcp ${p}"]
}
output "range" {
  value = "${data.omni_pd_pipeline.test.port_range.first}-${data.omni_pd_pipeline.test.port_range.last}"
}`,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectKnownOutputValue("firewall", knownvalue.ListExact([]knownvalue.Check{
				knownvalue.StringExact("allow tcp 25201"), knownvalue.StringExact("allow tcp 25202")})),
			plancheck.ExpectKnownOutputValue("range", knownvalue.StringExact("25201-25300")),
		}},
	})
}
