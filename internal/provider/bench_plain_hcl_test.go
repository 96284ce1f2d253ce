package provider

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// The plain-HCL baseline of scripts/bench.sh (bench/plain_hcl, variant b)
// is only a fair comparison if it renders the config the data source
// plans from the same inputs. This plans the module's own code next to the
// data source, with the inputs the count layout gives instances 0 and 1
// (tensor_parallel_size 1 and 2), and compares the two configs as
// Terraform reads them (yamldecode, so numbers compare by value: HCL
// writes 0.0 as 0) and the two serve commands (the head stage's, on the
// default release) as strings.
func TestBenchPlainHCL_SameConfigAsDataSource(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "bench", "plain_hcl", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(src) + `
data "omni_pd_pipeline" "p" {
  model      = var.model
  api_port   = var.api_port
  port_range = var.port_range
  prefill    = var.prefill
  decode     = var.decode
}

output "same_config" {
  value = yamldecode(yamlencode(local.deploy_config)) == yamldecode(data.omni_pd_pipeline.p.config_yaml)
}

output "same_command" {
  value = local.serve_command == data.omni_pd_pipeline.p.serve_command
}
`
	step := func(i int) resource.TestStep {
		tp := config.IntegerVariable(1 + i%2)
		return resource.TestStep{
			Config: cfg,
			ConfigVariables: config.Variables{
				"model":    config.StringVariable(seedModel),
				"api_port": config.IntegerVariable(10000 + i),
				"port_range": config.ObjectVariable(map[string]config.Variable{
					"first": config.IntegerVariable(20000 + 4*i),
					"last":  config.IntegerVariable(20003 + 4*i),
				}),
				"prefill": config.ObjectVariable(map[string]config.Variable{"tensor_parallel_size": tp}),
				"decode":  config.ObjectVariable(map[string]config.Variable{"tensor_parallel_size": tp}),
			},
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownOutputValue("same_config", knownvalue.Bool(true)),
					plancheck.ExpectKnownOutputValue("same_command", knownvalue.Bool(true)),
				},
			},
		}
	}
	accTest(t,
		step(0), step(1),
	)
}
