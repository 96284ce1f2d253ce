package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// stateBudget is what the recipe's default pipeline may store: its
// attributes as `terraform show -json` prints them, compact. It stored
// 11928 bytes before each process carried its argv, env, devices and ports
// for runners other than systemd, 13179 with them, and 13241 with the
// container input and the registration outputs, all null there.
const stateBudget = 13250

// The recipe's default pipeline stores at most stateBudget bytes of state,
// and its template unit is at most 3000 bytes. Terraform reads, decodes and
// compares every byte of state on every plan of every instance, so the
// budget keeps the shape that keeps it small: the check script is a file,
// no value is stored twice, and the stages share one template unit. A byte
// count, not a timing: the same plan always stores the same bytes, so the
// limit can be exact where a timing could not.
func TestAccPDPipelineResource_StateSize(t *testing.T) {
	accTest(t, resource.TestStep{
		Config:            pipelineResource(),
		ConfigStateChecks: []statecheck.StateCheck{stateSizeCheck{t: t, addr: resAddr, budget: stateBudget}},
	})
}

// containerStateBudget is what the default pipeline stores with a
// container launch: each stage's drop-in holds its whole run command
// line, some 2 KB, instead of the host launch's few variables.
const containerStateBudget = 20000

// The default pipeline in containers stores at most containerStateBudget
// bytes, its template unit too at most 3000.
func TestAccPDPipelineResource_ContainerStateSize(t *testing.T) {
	for _, block := range []string{`container = {}`, `container = { runtime = "podman" }`} {
		accTest(t, resource.TestStep{
			Config:            pipelineResource(block),
			ConfigStateChecks: []statecheck.StateCheck{stateSizeCheck{t: t, addr: resAddr, budget: containerStateBudget}},
		})
	}
}

type stateSizeCheck struct {
	t      *testing.T
	addr   string
	budget int
}

func (c stateSizeCheck) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil || req.State.Values == nil || req.State.Values.RootModule == nil {
		resp.Error = fmt.Errorf("no state")
		return
	}
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.addr {
			continue
		}
		b, err := json.Marshal(r.AttributeValues)
		if err != nil {
			resp.Error = err
			return
		}
		c.t.Logf("%s stores %d bytes of state (budget %d)", c.addr, len(b), c.budget)
		if len(b) > c.budget {
			resp.Error = fmt.Errorf("%s stores %d bytes of state, over %d", c.addr, len(b), c.budget)
			return
		}
		unit, _ := r.AttributeValues["systemd_unit"].(map[string]any)
		if content, _ := unit["content"].(string); len(content) > 3000 || content == "" {
			resp.Error = fmt.Errorf("systemd_unit is %d bytes, want 1 to 3000", len(content))
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the state", c.addr)
}
