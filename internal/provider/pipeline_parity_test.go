package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// The resource and the data source run the same conversion and the same
// engine: given the same inputs (and no history) they produce the same
// outputs, every one of them.
func TestAccPDPipeline_ResourceDataSourceParity(t *testing.T) {
	const inputs = `
  model       = "` + seedModel + `"
  format      = "stages"
  pipeline    = "qwen3_omni_moe_pd"
  vllm_omni_version = "0.28.0"
  config_path = "/opt/omni/pd.yaml"
  gpus        = 4
  prefill = {
    max_num_seqs = 8
    engine_args  = { max_num_batched_tokens = 16384, enforce_eager = false }
  }
  decode = {
    gpu_memory_utilization = 0.85
  }
  stage_overrides = {
    code2wav = { devices = [3] }
  }
  connector = {
    name         = "MultiConnector"
    protocol     = "tcp"
    extra_config = { connectors = [{ kv_connector = "NixlConnector" }, { kv_connector = "MooncakeConnector", kv_connector_extra_config = { mooncake_protocol_hint = "tcp" } }] }
  }
  reserved_ports = [25201]
`
	var checks []statecheck.StateCheck
	for _, name := range pipelineOutputNames {
		checks = append(checks, statecheck.CompareValuePairs(
			"omni_pd_pipeline.test", tfjsonpath.New(name),
			"data.omni_pd_pipeline.test", tfjsonpath.New(name),
			compare.ValuesSame()))
	}
	accTest(t, resource.TestStep{
		Config: `
resource "omni_pd_pipeline" "test" {` + inputs + `}

data "omni_pd_pipeline" "test" {` + inputs + `}
`,
		ConfigStateChecks: checks,
	})
}
