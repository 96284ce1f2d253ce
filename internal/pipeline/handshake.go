package pipeline

import "github.com/omnipd/terraform-provider-omni/internal/releases"

// handshakePort is the index, in ports, of the port bootstrap_port means on
// one side of the PD pair: the port the other side dials for the KV
// handoff. -1 when the side listens on no such port (it dials its peer).
//
// A connector alone has one. A MultiConnector's children each have their
// own (NIXL's side channel, Mooncake's bootstrap port, ...), and which one
// the attribute means must not depend on the order the children are
// listed in: it is the port of the child that carries the handoff, the one
// the release's handoff gate passes on (releases.HandoffGate: NixlConnector,
// whose prefill returns the remote_request_id vllm-omni's orchestrator
// sends decode). A MultiConnector without such a child fails the gate;
// there the child first by name is chosen, so the answer is still one.
func handshakePort(ports []sidePort, gate releases.HandoffGate) int {
	best := -1
	for i, sp := range ports {
		if !sp.Handshake {
			continue
		}
		if best < 0 || handshakeBefore(sp.class, ports[best].class, gate) {
			best = i
		}
	}
	return best
}

// handshakeBefore orders two children's handshake ports: one the gate
// passes on first, then by class name.
func handshakeBefore(a, b string, gate releases.HandoffGate) bool {
	if pa, pb := gate.Passing.Has(a), gate.Passing.Has(b); pa != pb {
		return pa
	}
	return a < b
}
