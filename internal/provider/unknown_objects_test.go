package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// unknownTwin is a configuration planned twice: omni_pd_pipeline.test
// with inputs unknown at plan (values of terraform_data resources created
// in the same apply), and omni_pd_pipeline.known with the same inputs
// written out.
type unknownTwin struct {
	// unknown and known are the two resources' input lines.
	unknown, known string
	// unknownAtPlan are the test resource's attributes the plan must show
	// unknown: the inputs as configured, unknown as a whole.
	unknownAtPlan []string
}

// unknownSources are the terraform_data resources the unknown inputs are
// made from: their outputs are unknown until they are created.
const unknownSources = `
resource "terraform_data" "flag" { input = true }
resource "terraform_data" "off" { input = false }
resource "terraform_data" "tokens" { input = 8192 }
resource "terraform_data" "prefill" {
  input = { max_num_seqs = 8, engine_args = { max_num_batched_tokens = 8192, enable_chunked_prefill = true } }
}
`

// TestAccPDPipelineResource_UnknownObjects: a nested input unknown at
// plan, as a whole or in part, plans and applies, and the applied
// pipeline is the one the same inputs give when known (its id hashes
// everything a machine runs). A whole object holding engine_args or
// extra_config failed every plan ("planned unknown for configured
// value": untyped_unknowns.go says why).
func TestAccPDPipelineResource_UnknownObjects(t *testing.T) {
	cases := map[string]unknownTwin{
		"prefill with engine_args behind a condition": {
			unknown:       `prefill = terraform_data.flag.output ? { engine_args = { max_num_batched_tokens = 8192 } } : null`,
			known:         `prefill = { engine_args = { max_num_batched_tokens = 8192 } }`,
			unknownAtPlan: []string{"prefill"},
		},
		"decode with engine_args and a setting behind a condition": {
			unknown:       `decode = terraform_data.flag.output ? { max_num_seqs = 32, engine_args = { enforce_eager = true } } : null`,
			known:         `decode = { max_num_seqs = 32, engine_args = { enforce_eager = true } }`,
			unknownAtPlan: []string{"decode"},
		},
		"connector with extra_config behind a condition": {
			unknown:       `connector = terraform_data.flag.output ? { name = "NixlConnector", extra_config = { num_threads = 4 } } : null`,
			known:         `connector = { name = "NixlConnector", extra_config = { num_threads = 4 } }`,
			unknownAtPlan: []string{"connector"},
		},
		"a whole object from another resource": {
			unknown:       `prefill = terraform_data.prefill.output`,
			known:         `prefill = { max_num_seqs = 8, engine_args = { max_num_batched_tokens = 8192, enable_chunked_prefill = true } }`,
			unknownAtPlan: []string{"prefill"},
		},
		"every object input at once": {
			unknown: strings.Join([]string{
				`prefill = terraform_data.flag.output ? { engine_args = { max_num_batched_tokens = 8192 } } : null`,
				`decode = terraform_data.flag.output ? { engine_args = { enforce_eager = true } } : null`,
				`connector = terraform_data.flag.output ? { extra_config = { num_threads = 4 } } : null`,
				`port_range = terraform_data.flag.output ? { first = 30000, last = 30100 } : null`,
				`systemd = terraform_data.flag.output ? { unit_prefix = "omni" } : null`,
			}, "\n  "),
			known: strings.Join([]string{
				`prefill = { engine_args = { max_num_batched_tokens = 8192 } }`,
				`decode = { engine_args = { enforce_eager = true } }`,
				`connector = { extra_config = { num_threads = 4 } }`,
				`port_range = { first = 30000, last = 30100 }`,
				`systemd = { unit_prefix = "omni" }`,
			}, "\n  "),
			unknownAtPlan: []string{"prefill", "decode", "connector", "port_range", "systemd"},
		},
		"objects that turn out null": {
			unknown: strings.Join([]string{
				`prefill = terraform_data.off.output ? { engine_args = { max_num_batched_tokens = 8192 } } : null`,
				`connector = terraform_data.off.output ? { extra_config = { num_threads = 4 } } : null`,
			}, "\n  "),
			known:         ``,
			unknownAtPlan: []string{"prefill", "connector"},
		},
		"engine_args unknown inside a known object": {
			unknown: `prefill = { max_num_seqs = 8, engine_args = terraform_data.flag.output ? { max_num_batched_tokens = 8192 } : null }`,
			known:   `prefill = { max_num_seqs = 8, engine_args = { max_num_batched_tokens = 8192 } }`,
		},
		"a key of extra_config and a setting unknown": {
			unknown: strings.Join([]string{
				`connector = { name = "NixlConnector", extra_config = { num_threads = terraform_data.tokens.output } }`,
				`decode = { max_num_seqs = terraform_data.tokens.output / 128 }`,
			}, "\n  "),
			known: strings.Join([]string{
				`connector = { name = "NixlConnector", extra_config = { num_threads = 8192 } }`,
				`decode = { max_num_seqs = 64 }`,
			}, "\n  "),
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			accTest(t, unknownTwinStep(c))
		})
	}
}

func unknownTwinStep(c unknownTwin) resource.TestStep {
	const knownAddr = "omni_pd_pipeline.known"
	config := unknownSources + `
resource "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  ` + c.unknown + `
}

resource "omni_pd_pipeline" "known" {
  model = "` + seedModel + `"
  ` + c.known + `
}
`
	planChecks := []plancheck.PlanCheck{plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("id"))}
	for _, name := range c.unknownAtPlan {
		planChecks = append(planChecks, plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New(name)))
	}
	var stateChecks []statecheck.StateCheck
	for _, name := range []string{"id", "config_yaml", "prefill", "decode", "connector", "port_range", "systemd", "ports", "stages", "launches"} {
		stateChecks = append(stateChecks, statecheck.CompareValuePairs(
			resAddr, tfjsonpath.New(name), knownAddr, tfjsonpath.New(name), compare.ValuesSame()))
	}
	return resource.TestStep{
		Config:            config,
		ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: planChecks},
		ConfigStateChecks: stateChecks,
	}
}

// TestAccPDPipelineResource_UnknownObjectOnUpdate: an input that becomes
// unknown as a whole on an update (its source is replaced) plans and
// applies in place, and ends as the same inputs known give.
func TestAccPDPipelineResource_UnknownObjectOnUpdate(t *testing.T) {
	source := func(rev string) string {
		return `
resource "terraform_data" "flag" {
  input            = true
  triggers_replace = ["` + rev + `"]
}
`
	}
	pipeline := pipelineResource(`prefill = terraform_data.flag.output ? { engine_args = { max_num_batched_tokens = 8192 } } : null`)
	known := `
resource "omni_pd_pipeline" "known" {
  model   = "` + seedModel + `"
  prefill = { engine_args = { max_num_batched_tokens = 8192 } }
}
`
	accTest(t,
		resource.TestStep{Config: source("1") + pipeline + known},
		resource.TestStep{
			Config: source("2") + pipeline + known,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectUnknownValue(resAddr, tfjsonpath.New("prefill")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.CompareValuePairs(resAddr, tfjsonpath.New("id"), "omni_pd_pipeline.known", tfjsonpath.New("id"), compare.ValuesSame()),
			},
		},
	)
}
