package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// With only model set, the data source reproduces vllm-omni's PD recipe, as
// the default release runs it (seedOutputs).
func TestAccPDPipelineDataSource_Seed(t *testing.T) {
	const addr = "data.omni_pd_pipeline.test"
	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
}
`,
		ConfigStateChecks: seedStateChecks(addr),
		Check:             checkSeedConfigYAML(addr),
	})
}

// config_path is used verbatim in the launch command.
func TestAccPDPipelineDataSource_ConfigPath(t *testing.T) {
	const addr = "data.omni_pd_pipeline.test"
	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model       = "` + seedModel + `"
  config_path = "/opt/omni/qwen3_omni_pd.yaml"
  api_port    = 9000
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("serve_command"), knownvalue.StringExact(
				"vllm serve "+seedModel+" --omni --port 9000 --stage-configs-path /opt/omni/qwen3_omni_pd.yaml"+
					" --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203")),
			// Each stage is its own process, an instance of the template,
			// every one reading config_path; the head's drop-in gives it
			// the API port, the others --headless.
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("systemd_unit").AtMapKey("content"), knownvalue.StringRegexp(regexp.MustCompile(
				`(?m)^ExecStart=.* -- /usr/local/bin/vllm serve `+regexp.QuoteMeta(seedModel)+` --omni \$OMNI_PD_STAGE_ARGS --stage-configs-path /opt/omni/qwen3_omni_pd\.yaml --stage-id %i --omni-master-address 127\.0\.0\.1 --omni-master-port 25203$`))),
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(0).AtMapKey("systemd_dropin").AtMapKey("content"),
				knownvalue.StringRegexp(regexp.MustCompile(`(?m)^Environment="OMNI_PD_STAGE_ARGS=--port 9000"$`))),
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(3).AtMapKey("systemd_dropin").AtMapKey("content"),
				knownvalue.StringRegexp(regexp.MustCompile(`(?m)^Environment="OMNI_PD_STAGE_ARGS=--headless"$`))),
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("ports"), knownvalue.SetPartial([]knownvalue.Check{
				knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("api"), "port": knownvalue.Int64Exact(9000)}),
			})),
		},
	})
}

// An unknown input defers the read: every output is unknown in the plan,
// with no error, and known after apply.
func TestAccPDPipelineDataSource_UnknownInput(t *testing.T) {
	const addr = "data.omni_pd_pipeline.test"
	accTest(t, resource.TestStep{
		Config: `
resource "terraform_data" "model" {
  input = "` + seedModel + `"
}

data "omni_pd_pipeline" "test" {
  model = terraform_data.model.output
}
`,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: append(unknownOutputChecks(addr), plancheck.ExpectResourceAction(addr, plancheck.ResourceActionRead)),
		},
		ConfigStateChecks: seedStateChecks(addr),
	})
}

// A dynamic input that is not an object is rejected at validate time.
func TestAccPDPipelineDataSource_EngineArgsNotObject(t *testing.T) {
	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model   = "` + seedModel + `"
  prefill = { engine_args = "enforce_eager" }
}
`,
		ExpectError: regexp.MustCompile(`(?s)prefill.engine_args must be an object`),
	})
}

// bootstrap_port means NIXL's side channel under a MultiConnector whatever
// the children's order: with Mooncake listed first, stages[*].bootstrap_port
// is the side-channel port, and prefill.bootstrap_port sets it.
func TestAccPDPipelineDataSource_BootstrapPortWhateverChildOrder(t *testing.T) {
	const addr = "data.omni_pd_pipeline.test"
	port := func(stage int) tfjsonpath.Path {
		return tfjsonpath.New("stages").AtSliceIndex(stage).AtMapKey("bootstrap_port")
	}
	named := func(i int, name string, number int64) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(addr, tfjsonpath.New("ports").AtSliceIndex(i), knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"name": knownvalue.StringExact(name), "port": knownvalue.Int64Exact(number)}))
	}
	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model     = "` + seedModel + `"
  prefill   = { bootstrap_port = 26000 }
  connector = { name = "MultiConnector", extra_config = { connectors = [{ kv_connector = "MooncakeConnector" }, { kv_connector = "NixlConnector" }] } }
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			named(1, "prefill_bootstrap", 25201), named(2, "prefill_side_channel", 26000),
			named(3, "decode_bootstrap", 25202), named(4, "decode_side_channel", 25203),
			statecheck.ExpectKnownValue(addr, port(0), knownvalue.Int64Exact(26000)),
			statecheck.ExpectKnownValue(addr, port(1), knownvalue.Int64Exact(25203)),
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("config_yaml"),
				knownvalue.StringRegexp(regexp.MustCompile(`VLLM_NIXL_SIDE_CHANNEL_PORT: "26000"`))),
		},
	})
}
