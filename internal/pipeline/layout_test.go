package pipeline

import (
	"testing"
)

// layout refuses what the stages it lays out cannot be: an override it
// cannot place on one stage, TP sizes the connector cannot pair, hosts that
// cannot reach each other.
func TestLayoutDiagnostics(t *testing.T) {
	m := seedModel
	tp := tpSizes
	runPlanDiagnostics(t, []planDiagCase{
		{"loopback across hosts, mapped spelling", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{Host: "::ffff:127.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
		}, "host_unreachable", "prefill.host"},
		{"loopback across hosts, IPv6", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "0:0:0:0:0:0:0:1"}}
		}, "host_unreachable", "decode.host"},
		{"override naming a model_stage two stages share", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "{model_stage: code2wav,", "{model_stage: talker,"),
				StageOverrides: map[string]StageOverride{"talker": {MaxNumSeqs: ptr(2)}}}
		}, "override_ambiguous", "stage_overrides.talker"},
		{"Mooncake TP mismatch", func(*testing.T) Spec { p, d := tp(1, 2); return Spec{Model: m, Prefill: p, Decode: d} }, "tp_mismatch", "decode.tensor_parallel_size"},
		{"NIXL decode TP below prefill", func(*testing.T) Spec {
			p, d := tp(2, 1)
			return Spec{Model: m, Prefill: p, Decode: d, Connector: ConnectorSpec{Name: "NixlConnector"}}
		}, "tp_mismatch", "decode.tensor_parallel_size"},
		// vLLM alone would take it; vllm-omni's PD validator does not.
		{"NIXL decode TP above prefill", func(*testing.T) Spec {
			p, d := tp(1, 2)
			return Spec{Model: m, Prefill: p, Decode: d, Connector: ConnectorSpec{Name: "NixlConnector"}}
		}, "tp_mismatch", "decode.tensor_parallel_size"},
		{"override of the split stage", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"thinker": {MaxNumSeqs: ptr(2)}}}
		}, "override_split_stage", "stage_overrides.thinker"},
		{"override of an unknown stage", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"vocoder": {}}}
		}, "override_unknown_stage", "stage_overrides.vocoder"},
		{"one side has a host, the other none", func(*testing.T) Spec {
			return Spec{Model: m, Decode: RoleSpec{Host: "10.0.0.2"}}
		}, "host_missing", "prefill.host"},
		{"loopback across hosts", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{Host: "127.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
		}, "host_unreachable", "prefill.host"},
	})
}
