package provider

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// Terraform plans the instances of a configuration concurrently (ten at a
// time by default) against one provider process. Fifty data sources with
// the same inputs, plus twenty that differ only in api_port, must all come
// out as if planned alone. Run with -race to catch shared state.
func TestAccPDPipelineDataSource_ManyConcurrent(t *testing.T) {
	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "same" {
  count       = 50
  model       = "` + seedModel + `"
  gpus        = 8
  decode      = { max_num_seqs = 32 }
  connector   = { name = "NixlConnector" }
}

data "omni_pd_pipeline" "ports" {
  count    = 20
  model    = "` + seedModel + `"
  api_port = 9000 + count.index
}

output "same_distinct" {
  value = length(distinct([for d in data.omni_pd_pipeline.same : jsonencode(d)]))
}

output "ports_distinct_ids" {
  value = length(distinct(data.omni_pd_pipeline.ports[*].id))
}

# Apart from the API port (and so the id and the commands), every instance
# is the seed layout.
output "ports_agree" {
  value = alltrue([for i, d in data.omni_pd_pipeline.ports :
    d.serve_args[5] == tostring(9000 + i) &&
    d.config_yaml == data.omni_pd_pipeline.ports[0].config_yaml &&
    jsonencode(d.stages) == jsonencode(data.omni_pd_pipeline.ports[0].stages) &&
    jsonencode([for p in d.ports : p if p.name != "api"]) == jsonencode([for p in data.omni_pd_pipeline.ports[0].ports : p if p.name != "api"])
  ])
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("same_distinct", knownvalue.Int64Exact(1)),
			statecheck.ExpectKnownOutputValue("ports_distinct_ids", knownvalue.Int64Exact(20)),
			statecheck.ExpectKnownOutputValue("ports_agree", knownvalue.Bool(true)),
		},
	})
}

// The shared path from inputs to outputs, called from many goroutines at
// once, gives what it gives when called alone.
func TestPlanOutputs_Concurrent(t *testing.T) {
	ctx := context.Background()
	inputs := func(i int) pipelineInputs {
		in := pipelineInputs{Model: types.StringValue(seedModel)}
		in.APIPort = types.NumberValue(bigInt(int64(8000 + i%7)))
		if i%3 == 0 {
			in.Format = types.StringValue("stages")
			in.Pipeline = types.StringValue("my_pd")
			in.VLLMOmniVersion = types.StringValue("0.28")
		}
		if i%2 == 0 {
			in.Model = types.StringValue("Qwen/Qwen2.5-Omni-7B")
			in.Preset = types.StringValue("qwen2_5_omni")
		}
		return in
	}
	want := make([]plannedOutputs, 21)
	for i := range want {
		out, ok, diags := planOutputs(ctx, inputs(i), nil)
		if !ok {
			t.Fatalf("case %d: %v", i, diags)
		}
		want[i] = out
	}
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for g := 0; g < 400; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			i := g % len(want)
			out, ok, diags := planOutputs(ctx, inputs(i), nil)
			switch {
			case !ok:
				errs <- fmt.Errorf("goroutine %d: %v", g, diags)
			case !maps.EqualFunc(out, want[i], tftypes.Value.Equal):
				errs <- fmt.Errorf("goroutine %d: outputs differ from a plan made alone", g)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func bigInt(i int64) *big.Float { return new(big.Float).SetInt64(i) }
