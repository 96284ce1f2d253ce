package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// These tests hold Plan and Check as a whole to determinism, so they stay
// here and not beside one step's file.

// Plan must be a pure function of its Spec (Terraform calls it at every
// plan and diffs the bytes): same input, same output, whatever the map
// iteration order, the call count or the goroutine.

// richSpec exercises every map in a Spec. reverse flips the order the
// maps are filled in, so the two specs are equal but were built differently.
func richSpec(reverse bool) Spec {
	fill := func(pairs ...any) map[string]any {
		m := map[string]any{}
		n := len(pairs) / 2
		for i := 0; i < n; i++ {
			j := i
			if reverse {
				j = n - 1 - i
			}
			key, _ := pairs[2*j].(string)
			m[key] = pairs[2*j+1]
		}
		return m
	}
	nested := func() map[string]any {
		return fill("zeta", int64(1), "alpha", "a", "mid", []any{int64(1), "x"}, "beta", fill("q", true, "p", 0.5, "r", nil))
	}
	reserved := []int{25205, 25201, 25203}
	if reverse {
		reserved = []int{25203, 25201, 25205}
	}
	overrides := map[string]StageOverride{}
	names := []string{"talker", "code2wav"}
	if reverse {
		names = []string{"code2wav", "talker"}
	}
	for _, n := range names {
		o := StageOverride{EngineArgs: nested()}
		if n == "talker" {
			o.MaxNumSeqs = ptr(4)
		}
		overrides[n] = o
	}
	return Spec{
		Model:          seedModel,
		Prefill:        RoleSpec{EngineArgs: nested(), TensorParallelSize: ptr(2)},
		Decode:         RoleSpec{EngineArgs: nested(), TensorParallelSize: ptr(2)},
		StageOverrides: overrides,
		ReservedPorts:  reserved,
		Connector:      ConnectorSpec{ExtraConfig: fill("num_workers", int64(4), "extra_b", "b", "extra_a", "a")},
	}
}

func TestPlanDeterministic(t *testing.T) {
	specs := map[string]Spec{"seed": {Model: seedModel}, "rich": richSpec(false), "nixl": {Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"}}}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			first := mustPlan(t, spec)
			for i := 0; i < 50; i++ {
				again := mustPlan(t, spec)
				if !reflect.DeepEqual(again, first) {
					t.Fatalf("run %d differs:\n%s\n---\n%s", i, first.ConfigYAML, again.ConfigYAML)
				}
			}
		})
	}
}

func TestPlanIgnoresMapOrder(t *testing.T) {
	a := mustPlan(t, richSpec(false))
	for i := 0; i < 20; i++ {
		b := mustPlan(t, richSpec(i%2 == 0))
		if a.ConfigYAML != b.ConfigYAML || a.ID != b.ID || !reflect.DeepEqual(a, b) {
			t.Fatalf("equal specs built in different orders give different plans:\n%s\n---\n%s", a.ConfigYAML, b.ConfigYAML)
		}
	}
	// And the maps' keys come out sorted where the engine writes them.
	cfg := config(t, a.ConfigYAML)
	ea, _ := dig(stageList(t, cfg)[0], "engine_args").(map[string]any)
	if ea["alpha"] != "a" || ea["zeta"] != 1 {
		t.Errorf("prefill engine_args not merged: %v", ea)
	}
}

func TestDiagnosticsDeterministic(t *testing.T) {
	bad := Spec{
		Model: "", Format: "x", GPUs: ptr(0),
		Prefill:        RoleSpec{EngineArgs: map[string]any{"max_num_seqs": int64(1), "tensor_parallel_size": int64(1), "model_stage": "x", "kv_transfer_config": nil}},
		StageOverrides: map[string]StageOverride{"a": {}, "b": {}, "c": {}, "thinker": {}},
		Connector:      ConnectorSpec{ExtraConfig: map[string]any{"mooncake_bootstrap_port": int64(1), "device_name": "x", "mooncake_protocol": "tcp"}},
	}
	_, first := Plan(bad)
	if len(first) < 5 {
		t.Fatalf("only %d diagnostics", len(first))
	}
	for i := 0; i < 50; i++ {
		if _, ds := Plan(bad); !reflect.DeepEqual(ds, first) {
			t.Fatalf("run %d: %v, want %v", i, ds.Codes(), first.Codes())
		}
	}
}

// TestPlanConcurrent plans from many goroutines at once (run with -race):
// the planner shares only the parsed presets, which it must never edit.
func TestPlanConcurrent(t *testing.T) {
	specs := []Spec{
		{Model: seedModel},
		{Model: "Qwen/Qwen2.5-Omni-7B"},
		richSpec(false),
		{Model: seedModel, Format: "stages", Pipeline: "qwen3_omni_moe_pd", VLLMOmniVersion: "0.28.0"},
		{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"}, Prefill: RoleSpec{TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)}},
		{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}},
	}
	want := make([]*Result, len(specs))
	for i, s := range specs {
		want[i] = mustPlan(t, s)
	}
	const workers = 32
	var wg sync.WaitGroup
	errs := make(chan string, workers*len(specs))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; k < len(specs)*3; k++ {
				i := (w + k) % len(specs)
				res, ds := Plan(specs[i])
				if ds.HasErrors() || !reflect.DeepEqual(res, want[i]) {
					errs <- fmt.Sprintf("worker %d, spec %d: differs (%v)", w, i, ds.Codes())
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestShared_NeverEdited: plans of every kind leave the shared, parsed
// presets exactly as the embedded files parse: the planner reads them (as
// its base config, and for the topology when it writes a stages base as
// stage_args) and edits clones.
func TestShared_NeverEdited(t *testing.T) {
	for _, s := range []Spec{
		{Model: seedModel},
		{Model: "Qwen/Qwen2.5-Omni-7B"},
		richSpec(false),
		richSpec(true),
		{Model: seedModel, Format: "stages", Pipeline: "qwen3_omni_moe_pd", VLLMOmniVersion: "0.28.0"},
		{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {Devices: []int{3}, MaxNumSeqs: ptr(4)}}},
		{Model: seedModel, BaseConfig: readLocal(t, stagesQwen3), Format: "stage_args"},
	} {
		Plan(s)
	}
	for _, name := range presets.Names() {
		src, err := os.ReadFile(filepath.Join("..", "presets", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := stageconfig.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		shared, err := presets.Shared(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := mustRender(t, shared), mustRender(t, fresh); got != want {
			t.Errorf("preset %s was edited by a plan:\n%s", name, got)
		}
	}
}

func mustRender(t *testing.T, doc *stageconfig.Document) string {
	t.Helper()
	b, err := doc.Render()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Check returns its problems in one order on every call: connector
// conflicts were collected from a map.
func TestCheckOrderStable(t *testing.T) {
	src := `stage_args:
  - stage_id: 0
    engine_args: {model_stage: a}
    output_connectors: {to_stage_1: x, to_stage_2: x, to_stage_3: x}
    final_output: true
  - stage_id: 1
    engine_args: {model_stage: b}
    engine_input_source: [0]
    input_connectors: {from_stage_0: y}
  - stage_id: 2
    engine_args: {model_stage: c}
    engine_input_source: [0]
    input_connectors: {from_stage_0: z}
  - stage_id: 3
    engine_args: {model_stage: d}
    engine_input_source: [0]
    input_connectors: {from_stage_0: w}
`
	first := Check([]byte(src))
	if n := len(codesOf(first, "connector_conflict")); n != 3 {
		t.Fatalf("%d conflicts, want 3: %v", n, first)
	}
	for i := 0; i < 50; i++ {
		if got := Check([]byte(src)); !reflect.DeepEqual(got, first) {
			t.Fatalf("call %d: %v, want %v", i, got.Codes(), first.Codes())
		}
	}
}

// One plan reports the problems of the inputs, the layout and the release
// together: a bad host does not hide a TP mismatch or a bad version.
func TestOnePassAcrossSteps(t *testing.T) {
	_, ds := Plan(Spec{Model: seedModel, VLLMOmniVersion: "latest", Service: ServiceSpec{User: "root"},
		Prefill: RoleSpec{Host: "gpu-a.internal"}, Decode: RoleSpec{TensorParallelSize: ptr(2)},
		Connector: ConnectorSpec{Name: "NixlConnector"}})
	for _, code := range []string{"host_invalid", "systemd_user_invalid", "tp_mismatch", "release_malformed"} {
		if len(codesOf(ds, code)) == 0 {
			t.Errorf("no %s in %v", code, ds.Codes())
		}
	}
}
