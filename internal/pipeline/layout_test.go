package pipeline

import (
	"strings"
	"testing"
)

// The checks of a layout refuse what the stages it lays out cannot be: an
// override it cannot place on one stage, TP sizes the connector cannot
// pair, hosts that cannot reach each other. The steps run alone, on the
// layout and the connector, without the rest of Plan.
func TestLayoutDiagnostics(t *testing.T) {
	m := seedModel
	tp := tpSizes
	runStepDiagnostics(t, []planDiagCase{
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
		{"TP mismatch on the default connector", func(*testing.T) Spec { p, d := tp(1, 2); return Spec{Model: m, Prefill: p, Decode: d} }, "tp_mismatch", "decode.tensor_parallel_size"},
		{"Mooncake TP mismatch, as a MultiConnector child", func(*testing.T) Spec {
			p, d := tp(2, 1)
			return Spec{Model: m, Prefill: p, Decode: d, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}}}
		}, "tp_mismatch", "decode.tensor_parallel_size"},
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
	}, func(t *testing.T, spec Spec) Diagnostics {
		_, laid := laidOut(t, spec)
		var ds Diagnostics
		conn := chooseConnector(spec.Connector, &ds)
		checkLayout(laid, spec.StageOverrides, conn, &ds)
		checkHosts(laid, &ds)
		return ds
	})
}

// head_wait_seconds bounds a headless process's wait for the head: it has
// no effect, and says so, only where one process runs the whole pipeline
// (0.22.0 and 0.23.0rc1 on one host, which apply each stage's
// runtime.env there); every other launch runs each stage as its own
// process, and the headless ones wait that long.
func TestHeadWaitSeconds(t *testing.T) {
	hosts := func(s Spec) Spec {
		s.Prefill.Host, s.Decode.Host = "10.0.0.1", "10.0.0.2"
		return s
	}
	for _, tc := range []struct {
		name   string
		spec   Spec
		unused bool
	}{
		{"0.22.0 on one host", Spec{VLLMOmniVersion: "0.22.0"}, true},
		{"0.23.0rc1 on one host", Spec{VLLMOmniVersion: "0.23.0rc1"}, true},
		{"the default release on one host", Spec{}, false},
		{"0.20.0 on one host", Spec{VLLMOmniVersion: "0.20.0"}, false},
		{"0.22.0 across hosts", hosts(Spec{VLLMOmniVersion: "0.22.0"}), false},
		{"the default release across hosts", hosts(Spec{}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Model, spec.Service.HeadWaitSeconds = seedModel, ptr(120)
			res, ds := Plan(spec)
			if res == nil {
				t.Fatalf("Plan failed:\n%s", describeDiags(ds))
			}
			unused := codesOf(ds, "head_wait_unused")
			if got := len(unused) == 1; got != tc.unused || len(unused) > 1 {
				t.Fatalf("%d head_wait_unused, want unused=%v:\n%s", len(unused), tc.unused, describeDiags(ds))
			}
			if tc.unused {
				d := unused[0]
				if d.Severity != SeverityWarning || d.Path.String() != "systemd.head_wait_seconds" ||
					!strings.Contains(d.Summary, "has no effect") || !strings.Contains(d.Detail, "vllm-omni "+res.Release) {
					t.Errorf("warning %+v", d)
				}
				return
			}
			// The headless processes wait the bound given.
			headless := 0
			for _, l := range res.Launches {
				for _, proc := range l.Processes {
					if proc.Role != ProcessHeadless {
						continue
					}
					headless++
					if unit := loadedUnit(res, proc); !strings.Contains(unit, " --head-wait 120 --head-unit vllm-omni-stage@0.service ") {
						t.Errorf("%s does not wait 120 s for the head:\n%s", proc.UnitName, unit)
					}
				}
			}
			if headless == 0 {
				t.Error("no headless process")
			}
		})
	}
	// Without it, no warning, on any launch.
	if _, ds := Plan(Spec{Model: seedModel, VLLMOmniVersion: "0.22.0"}); hasCodeAny(ds, "head_wait_unused") {
		t.Errorf("head_wait_unused with head_wait_seconds unset: %v", ds.Codes())
	}
}
