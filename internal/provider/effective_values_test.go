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
	partly := `prefill = { max_num_seqs = 8, gpu_memory_utilization = 0.85 }
  decode = { devices = [3], tensor_parallel_size = 1 }
  connector = { kv_both = true }
  port_range = { first = 30000, last = 30010 }`
	accTest(t,
		resource.TestStep{
			Config:            both(""),
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: nestedDefaults().planChecks()},
			ConfigStateChecks: nestedDefaults().stateChecks(),
		},
		resource.TestStep{
			Config:           both(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
			Config: both(partly),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(nestedWritten().planChecks(),
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate))},
			ConfigStateChecks: nestedWritten().stateChecks(),
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
				plancheck.ExpectKnownValue(resAddr, nestedAt("prefill", "max_num_seqs"), knownvalue.Int64Exact(16)),
				plancheck.ExpectKnownValue(resAddr, nestedAt("port_range", "first"), knownvalue.Int64Exact(25201)),
			}},
		},
	)
}

// nestedChecks are values expected at paths of both entities.
type nestedChecks []struct {
	path  tfjsonpath.Path
	check knownvalue.Check
}

// nestedDefaults are what the nested inputs read back when none is set.
func nestedDefaults() nestedChecks {
	return nestedChecks{
		{nestedAt("prefill", "devices"), int64s(0)},
		{nestedAt("prefill", "tensor_parallel_size"), knownvalue.Int64Exact(1)},
		{nestedAt("prefill", "max_num_seqs"), knownvalue.Int64Exact(16)},
		{nestedAt("prefill", "bootstrap_port"), knownvalue.Int64Exact(25201)},
		{nestedAt("prefill", "gpu_memory_utilization"), knownvalue.Null()},
		{nestedAt("prefill", "host"), knownvalue.Null()},
		{nestedAt("prefill", "engine_args"), knownvalue.Null()},
		{nestedAt("decode", "devices"), int64s(1)},
		{nestedAt("decode", "tensor_parallel_size"), knownvalue.Int64Exact(1)},
		{nestedAt("decode", "max_num_seqs"), knownvalue.Int64Exact(64)},
		{nestedAt("decode", "bootstrap_port"), knownvalue.Int64Exact(25202)},
		{nestedAt("connector", "name"), knownvalue.StringExact("NixlConnector")},
		{nestedAt("connector", "protocol"), knownvalue.Null()},
		{nestedAt("connector", "kv_both"), knownvalue.Null()},
		{nestedAt("port_range", "first"), knownvalue.Int64Exact(25201)},
		{nestedAt("port_range", "last"), knownvalue.Int64Exact(25300)},
	}
}

// nestedWritten are what they read back with some of their fields set.
func nestedWritten() nestedChecks {
	return nestedChecks{
		{nestedAt("prefill", "devices"), int64s(0)},
		{nestedAt("prefill", "tensor_parallel_size"), knownvalue.Int64Exact(1)},
		{nestedAt("prefill", "max_num_seqs"), knownvalue.Int64Exact(8)},
		{nestedAt("prefill", "bootstrap_port"), knownvalue.Int64Exact(30000)},
		{nestedAt("prefill", "gpu_memory_utilization"), knownvalue.Float64Exact(0.85)},
		{nestedAt("decode", "devices"), int64s(3)},
		{nestedAt("decode", "max_num_seqs"), knownvalue.Int64Exact(64)},
		{nestedAt("decode", "bootstrap_port"), knownvalue.Int64Exact(30001)},
		// The connector the user left unset reads back as planned, the
		// setting written as written. (protocol, the old field of this
		// case, is MooncakeConnector's only, which fails the handoff gate.)
		{nestedAt("connector", "name"), knownvalue.StringExact("NixlConnector")},
		{nestedAt("connector", "kv_both"), knownvalue.Bool(true)},
		{nestedAt("connector", "protocol"), knownvalue.Null()},
		{nestedAt("port_range", "first"), knownvalue.Int64Exact(30000)},
		{nestedAt("port_range", "last"), knownvalue.Int64Exact(30010)},
	}
}

// planChecks expect the values in the resource's plan.
func (cs nestedChecks) planChecks() []plancheck.PlanCheck {
	var out []plancheck.PlanCheck
	for _, c := range cs {
		out = append(out, plancheck.ExpectKnownValue(resAddr, c.path, c.check))
	}
	return out
}

// stateChecks expect them in both entities' states.
func (cs nestedChecks) stateChecks() []statecheck.StateCheck {
	var out []statecheck.StateCheck
	for _, c := range cs {
		out = append(out, statecheck.ExpectKnownValue(dataAddr, c.path, c.check), statecheck.ExpectKnownValue(resAddr, c.path, c.check))
	}
	return out
}

// nestedAt is the path of a nested input's field.
func nestedAt(name string, keys ...string) tfjsonpath.Path {
	p := tfjsonpath.New(name)
	for _, k := range keys {
		p = p.AtMapKey(k)
	}
	return p
}

// int64s expects a list of these whole numbers.
func int64s(ns ...int64) knownvalue.Check {
	out := make([]knownvalue.Check, len(ns))
	for i, n := range ns {
		out[i] = knownvalue.Int64Exact(n)
	}
	return knownvalue.ListExact(out)
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
