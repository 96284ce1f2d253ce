package pipeline

import (
	"fmt"
	"strings"
	"testing"
)

// childEntry is a MultiConnector child as connector.extra_config lists it,
// with the settings it needs.
func childEntry(class string) map[string]any {
	e := map[string]any{"kv_connector": class}
	if class == connectorP2pNccl {
		e["kv_connector_extra_config"] = map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}
	}
	return e
}

// permutations lists every order of xs.
func permutations(xs []string) [][]string {
	if len(xs) <= 1 {
		return [][]string{append([]string(nil), xs...)}
	}
	var out [][]string
	for i := range xs {
		rest := append(append([]string(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{xs[i]}, p...))
		}
	}
	return out
}

// bootstrap_port means one thing whatever the order of a MultiConnector's
// children: the port the other side dials for the KV handoff, which under
// vllm-omni's handoff gate is NIXL's side channel. For every set of
// children with NIXL in it, in every order, the stages' bootstrap_port is
// the side-channel port, and prefill.bootstrap_port / decode.bootstrap_port
// set VLLM_NIXL_SIDE_CHANNEL_PORT.
func TestBootstrapPortIndependentOfChildOrder(t *testing.T) {
	others := []string{connectorMooncake, connectorLMCache, connectorP2pNccl}
	tried := 0
	for mask := 1; mask < 1<<len(others); mask++ {
		set := []string{connectorNixl}
		version := ""
		for i, o := range others {
			if mask&(1<<i) != 0 {
				set = append(set, o)
				if o == connectorP2pNccl {
					version = "0.22" // the last line whose vLLM has P2pNcclConnector
				}
			}
		}
		for _, order := range permutations(set) {
			var children []any
			for _, c := range order {
				children = append(children, childEntry(c))
			}
			conn := ConnectorSpec{Name: connectorMulti, ExtraConfig: map[string]any{"connectors": children}}
			name := strings.Join(order, ",")
			t.Run(name, func(t *testing.T) {
				res := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: version, Connector: conn})
				ports := portsByName(res)
				for _, s := range res.Stages[:2] {
					want := ports["/"+s.Role+"_side_channel"]
					if got := s.BootstrapPort; got == nil || *got != want {
						t.Errorf("%s bootstrap_port = %s, want the side channel %d (ports %v)", s.Role, fmtPort(got), want, ports)
					}
				}
				given := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: version, Connector: conn,
					Prefill: RoleSpec{BootstrapPort: ptr(30100)}, Decode: RoleSpec{BootstrapPort: ptr(30200)}})
				cfg := config(t, given.ConfigYAML)
				for i, want := range []string{"30100", "30200"} {
					if got := digPath(cfg, fmt.Sprintf("stage_args.%d.runtime.env.VLLM_NIXL_SIDE_CHANNEL_PORT", i)); got != want {
						t.Errorf("stage %d: bootstrap_port %s set VLLM_NIXL_SIDE_CHANNEL_PORT = %v", i, want, got)
					}
				}
			})
			tried++
		}
	}
	if tried != 2+2+2+6+6+6+24 {
		t.Errorf("tried %d orders", tried)
	}
}

func fmtPort(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
