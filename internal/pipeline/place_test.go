package pipeline

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// configDevices reads runtime.devices of each stage in the rendered config,
// so the tests see what vllm-omni will see, not only the summary.
func configDevices(t *testing.T, res *Result) []string {
	t.Helper()
	var out []string
	for _, s := range stageList(t, config(t, res.ConfigYAML)) {
		d, _ := dig(s, "runtime", "devices").(string)
		if d == "" {
			d, _ = s["devices"].(string)
		}
		out = append(out, d)
	}
	return out
}

func TestPlacement(t *testing.T) {
	tests := []struct {
		name     string
		spec     Spec
		devices  []string // runtime.devices of stages 0..3
		gpuCount int
	}{
		{"seed", Spec{Model: seedModel}, []string{"0", "1", "2", "2"}, 3},
		{"TP=2 both sides", Spec{Model: seedModel,
			Prefill: RoleSpec{TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)}},
			[]string{"0,1", "2,3", "4", "4"}, 5},
		{"user devices for the pair", Spec{Model: seedModel,
			Prefill: RoleSpec{Devices: []int{3}}, Decode: RoleSpec{Devices: []int{5}}},
			[]string{"3", "5", "0", "0"}, 6}, // GPU 5 is the sixth of the host's
		{"user devices for one side only", Spec{Model: seedModel, Decode: RoleSpec{Devices: []int{0}}},
			[]string{"1", "0", "2", "2"}, 3},
		{"user devices for the downstream stages", Spec{Model: seedModel, StageOverrides: map[string]StageOverride{
			"talker": {Devices: []int{6}}, "code2wav": {Devices: []int{7}}}},
			[]string{"0", "1", "6", "7"}, 8},
		{"devices listed out of order are kept as given", Spec{Model: seedModel,
			Prefill: RoleSpec{Devices: []int{3, 1}, TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)}},
			[]string{"3,1", "0,2", "4", "4"}, 5},
		{"exactly enough GPUs", Spec{Model: seedModel, GPUs: ptr(3)}, []string{"0", "1", "2", "2"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, tc.spec)
			if got := configDevices(t, res); !reflect.DeepEqual(got, tc.devices) {
				t.Errorf("devices = %v, want %v", got, tc.devices)
			}
			if res.GPUCount != tc.gpuCount {
				t.Errorf("GPUCount = %d, want %d", res.GPUCount, tc.gpuCount)
			}
			// The summary agrees with the config.
			for i, s := range res.Stages {
				if want := tc.devices[i]; strings.Trim(strings.ReplaceAll(fmt.Sprint(s.Devices), " ", ","), "[]") != want {
					t.Errorf("Stages[%d].Devices = %v, config says %q", i, s.Devices, want)
				}
			}
		})
	}
}

func TestPlacementErrors(t *testing.T) {
	tests := []struct {
		name, code, path string
		spec             Spec
		detail           string
	}{
		{"needs more GPUs than the host has", "gpus_exceeded", "gpus",
			Spec{Model: seedModel, GPUs: ptr(2)}, "needs devices 0-2 (3 GPUs)"},
		{"TP=2 on four GPUs", "gpus_exceeded", "gpus",
			Spec{Model: seedModel, GPUs: ptr(4), Prefill: RoleSpec{TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)}}, "Raise gpus"},
		{"a listed device past the limit is blamed", "gpus_exceeded", "decode.devices",
			Spec{Model: seedModel, GPUs: ptr(4), Decode: RoleSpec{Devices: []int{7}}}, "list devices that exist"},
		{"device count below TP", "devices_world_size", "prefill.devices",
			Spec{Model: seedModel, Prefill: RoleSpec{Devices: []int{0}, TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)}}, "needs 2"},
		{"device count above TP", "devices_world_size", "decode.devices",
			Spec{Model: seedModel, Decode: RoleSpec{Devices: []int{1, 2}}}, "lists 2 device(s)"},
		{"P and D share a GPU", "pd_devices_overlap", "decode.devices",
			Spec{Model: seedModel, Prefill: RoleSpec{Devices: []int{0}}, Decode: RoleSpec{Devices: []int{0}}}, "device(s) 0"},
		{"override device count", "devices_world_size", "stage_overrides.talker.devices",
			Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {Devices: []int{2, 3}}}}, "lists 2 device(s)"},
		{"shared GPU memory over 1.0", "gpu_memory_oversubscribed", "stage_overrides.code2wav.gpu_memory_utilization",
			Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {GPUMemoryUtilization: ptr(0.95)}}}, "add up to 1.05"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, ds := Plan(tc.spec)
			if res != nil {
				t.Fatalf("Plan succeeded; want %s", tc.code)
			}
			if !hasCode(ds, tc.code, tc.path) {
				t.Fatalf("want %s at %s, got:\n%s", tc.code, tc.path, describeDiags(ds))
			}
			for _, d := range ds {
				if d.Code.String() == tc.code && !strings.Contains(d.Detail, tc.detail) {
					t.Errorf("detail %q does not mention %q", d.Detail, tc.detail)
				}
			}
		})
	}
}

// TestPlacementMemoryWarning: stages that share a GPU above 0.95 of its
// memory plan, with a warning; at 0.95 they plan without one.
func TestPlacementMemoryWarning(t *testing.T) {
	res, ds := Plan(Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {GPUMemoryUtilization: ptr(0.88)}}})
	if res == nil {
		t.Fatalf("plan failed:\n%s", describeDiags(ds))
	}
	if len(ds.Warnings()) != 1 || ds.Warnings()[0].Code.String() != "gpu_memory_tight" {
		t.Errorf("warnings = %v, want one gpu_memory_tight", ds.Codes())
	}
	if _, ds := Plan(Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {GPUMemoryUtilization: ptr(0.85)}}}); len(ds) != 0 {
		t.Errorf("0.85 + 0.10 = 0.95 should plan cleanly, got %v", ds.Codes())
	}
}

// TestPlacementKeepsPrevious checks the resource's promise: devices an
// earlier plan chose stay while they are still valid, so a later change
// elsewhere does not move running stages.
func TestPlacementKeepsPrevious(t *testing.T) {
	prev := func(devs map[string][]int) *Allocations {
		a := &Allocations{Devices: map[HostKey][]int{}}
		for k, d := range devs {
			a.Devices[HostKey{"", k}] = d
		}
		return a
	}
	tests := []struct {
		name    string
		spec    Spec
		devices []string
	}{
		{"valid previous devices are kept",
			Spec{Model: seedModel, Previous: prev(map[string][]int{"prefill": {4}, "decode": {5}, "stage:talker": {6}, "stage:code2wav": {6}})},
			[]string{"4", "5", "6", "6"}},
		{"an allocation the previous plan made is kept when another changes",
			Spec{Model: seedModel, Previous: prev(map[string][]int{"prefill": {0}, "decode": {1}, "stage:talker": {2}, "stage:code2wav": {2}}),
				StageOverrides: map[string]StageOverride{"talker": {Devices: []int{3}}}},
			[]string{"0", "1", "3", "2"}},
		{"previous devices of the wrong size are dropped",
			Spec{Model: seedModel, Prefill: RoleSpec{TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)},
				Previous: prev(map[string][]int{"prefill": {0}, "decode": {1}})},
			[]string{"0,1", "2,3", "4", "4"}},
		{"previous devices past gpus are dropped",
			Spec{Model: seedModel, GPUs: ptr(3), Previous: prev(map[string][]int{"prefill": {0}, "decode": {7}})},
			[]string{"0", "1", "2", "2"}},
		{"previous devices now given to the other side are dropped",
			Spec{Model: seedModel, Decode: RoleSpec{Devices: []int{4}}, Previous: prev(map[string][]int{"prefill": {4}, "decode": {5}})},
			[]string{"0", "4", "1", "1"}},
		{"a downstream stage does not keep a GPU now used by the pair",
			Spec{Model: seedModel, Prefill: RoleSpec{Devices: []int{2}}, Previous: prev(map[string][]int{"stage:talker": {2}, "stage:code2wav": {2}})},
			[]string{"2", "0", "1", "1"}},
		// A downstream stage named like the pair's side keeps its own
		// devices, and the pair keeps theirs.
		{"a downstream stage with model_stage decode",
			Spec{Model: seedModel, BaseConfig: strings.Replace(readPreset(t, "qwen3_omni_moe"), "model_stage: code2wav", "model_stage: decode", 1),
				Previous: prev(map[string][]int{"prefill": {0}, "decode": {1}, "stage:talker": {2}, "stage:decode": {3}})},
			[]string{"0", "1", "2", "3"}},
		{"repeated previous devices are dropped",
			Spec{Model: seedModel, Prefill: RoleSpec{TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)},
				Previous: prev(map[string][]int{"prefill": {6, 6}})},
			[]string{"0,1", "2,3", "4", "4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// place alone, on the layout, the earlier plan and the GPUs.
			_, laid := laidOut(t, tc.spec)
			devices := place(laid, tc.spec.Previous, tc.spec.GPUs)
			var got []string
			for _, s := range laid.stages {
				got = append(got, stageconfig.FormatDevices(devices[s.key]))
			}
			if !reflect.DeepEqual(got, tc.devices) {
				t.Errorf("devices = %v, want %v", got, tc.devices)
			}
		})
	}
}

// TestAllocationsRoundTrip: feeding a plan's Allocations back as Previous
// changes nothing, which is what keeps a resource's plan stable.
func TestAllocationsRoundTrip(t *testing.T) {
	for _, spec := range []Spec{
		{Model: seedModel},
		{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"}, Prefill: RoleSpec{TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)}},
		{Model: seedModel, ReservedPorts: []int{25201, 25203}, PortRange: &PortRange{First: 25201, Last: 25210}},
	} {
		first := mustPlan(t, spec)
		spec.Previous = &first.Allocations
		second := mustPlan(t, spec)
		if second.ConfigYAML != first.ConfigYAML || !reflect.DeepEqual(second.Allocations, first.Allocations) {
			t.Errorf("replanning with Previous changed the plan:\n%s\n---\n%s", first.ConfigYAML, second.ConfigYAML)
		}
	}
}

func readPreset(t *testing.T, name string) string {
	t.Helper()
	b, err := presets.Source(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The checks of a placement refuse devices and parallel sizes the GPUs
// cannot hold; they run alone here, on the layout and what place chose.
func TestPlaceDiagnostics(t *testing.T) {
	m := seedModel
	tp := tpSizes
	runStepDiagnostics(t, []planDiagCase{
		{"gpus too few", func(*testing.T) Spec { return Spec{Model: m, GPUs: ptr(2)} }, "gpus_exceeded", "gpus"},
		{"override devices of the wrong size", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"code2wav": {Devices: []int{2, 3}}}}
		}, "devices_world_size", "stage_overrides.code2wav.devices"},
		{"P and D overlap", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{Devices: []int{1}}, Decode: RoleSpec{Devices: []int{1}}}
		}, "pd_devices_overlap", "decode.devices"},
		{"device count below TP", func(*testing.T) Spec {
			p, d := tp(2, 2)
			p.Devices = []int{0}
			return Spec{Model: m, Prefill: p, Decode: d}
		}, "devices_world_size", "prefill.devices"},
		{"memory over-subscribed", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"code2wav": {GPUMemoryUtilization: ptr(0.5)}}}
		}, "gpu_memory_oversubscribed", "stage_overrides.code2wav.gpu_memory_utilization"},
		// Parallel sizes too large to place: placement would build a device
		// list that long, so checkWorldBounds refuses them first.
		{"absurd prefill TP", func(*testing.T) Spec {
			p, d := tp(1<<22, 1<<22)
			return Spec{Model: m, Prefill: p, Decode: d}
		}, "world_size_range", "prefill.tensor_parallel_size"},
		{"absurd TP in the base config", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "{model_stage: thinker,", "{tensor_parallel_size: 100000000, model_stage: thinker,")}
		}, "world_size_range", "base_config"},
		{"absurd replicas of a stage", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(1 << 30)}}}
		}, "world_size_range", "stage_overrides.talker"},
	}, func(t *testing.T, spec Spec) Diagnostics {
		base, laid := laidOut(t, spec)
		var ds Diagnostics
		if checkWorldBounds(laid, base.path, &ds) {
			checkPlacement(laid, place(laid, spec.Previous, spec.GPUs), spec.GPUs, &ds)
		}
		return ds
	})
}
