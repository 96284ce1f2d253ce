package provider

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

func sampleResult() *pipeline.Result {
	producer, consumer := "kv_producer", "kv_consumer"
	p0, p1, zero, one := 25201, 25202, 0, 1
	return &pipeline.Result{
		ID:         "abc",
		ConfigYAML: "stage_args: []\n",
		Stages: []pipeline.StageInfo{
			{StageID: 0, Role: pipeline.RolePrefill, ModelStage: "thinker", Devices: []int{0}, TensorParallelSize: 1, KVRole: &producer, BootstrapPort: &p0},
			{StageID: 1, Role: pipeline.RoleDecode, ModelStage: "thinker", Devices: []int{1}, TensorParallelSize: 1, Inputs: []int{0}, KVRole: &consumer, BootstrapPort: &p1},
			{StageID: 2, Role: pipeline.RoleStage, ModelStage: "talker", Devices: []int{2}, TensorParallelSize: 1, Inputs: []int{1}},
		},
		Edges: []pipeline.Edge{{From: 0, To: 1}, {From: 1, To: 2}},
		Ports: []pipeline.Port{
			{Name: "api", Port: 8091},
			{Name: "prefill_side_channel", Port: p0, StageID: &zero},
			{Name: "decode_side_channel", Port: p1, StageID: &one},
		},
		GPUCount:     3,
		ServeArgs:    []string{"vllm", "serve", "m"},
		ServeCommand: "vllm serve m",
		Diagram:      "flowchart LR",
		Launches: []pipeline.Launch{{Host: pipeline.SingleHost, StageIDs: []int{0, 1, 2},
			Ports: []int{8091, 25201, 25202}, GPUCount: 3, Processes: []pipeline.Process{{Role: pipeline.ProcessHead, Argv: []string{"vllm", "serve", "m"},
				Devices: []int{0, 1, 2}, Ports: []pipeline.NamedPort{{Name: "api", Port: 8091}}, UnitName: "vllm-omni.service"}}}},
		SystemdUnit:     pipeline.UnitFile{Path: "/etc/systemd/system/vllm-omni.service", Content: "[Unit]\n"},
		CheckScriptPath: pipeline.DefaultCheckScriptPath,
	}
}

// Outputs written into a plan read back through the framework, and from
// there into the allocations the next plan keeps: the schema and the
// conversions agree.
func TestOutputsRoundTrip(t *testing.T) {
	ctx := context.Background()
	out, diags := outputsFromResult(ctx, pipelineInputs{}, sampleResult())
	if diags.HasError() {
		t.Fatal(diags)
	}
	plan := planWith(t, map[string]any{"model": "m"})
	if diags := setOutputs(ctx, &plan, out); diags.HasError() {
		t.Fatal(diags)
	}
	if !plan.Raw.IsFullyKnown() {
		t.Fatal("outputs left unknowns")
	}

	if n := len(valueAt[types.List](t, plan, "stages").Elements()); n != 3 {
		t.Errorf("%d stages, want 3", n)
	}
	if !valueAt[types.String](t, plan, "stages.2.kv_role").IsNull() || !valueAt[types.Int64](t, plan, "stages.2.bootstrap_port").IsNull() ||
		!valueAt[types.String](t, plan, "stages.0.host").IsNull() {
		t.Errorf("stages = %s", valueAt[types.List](t, plan, "stages"))
	}
	if inputs := valueAt[types.List](t, plan, "stages.0.inputs"); inputs.IsNull() || len(inputs.Elements()) != 0 {
		t.Errorf("a stage without inputs must have an empty list, got %s", inputs)
	}
	if n := len(valueAt[types.List](t, plan, "launches").Elements()); n != 1 || valueAt[types.Map](t, plan, "launches.0.env").IsNull() ||
		valueAt[string](t, plan, "launches.0.host") != pipeline.SingleHost || valueAt[int64](t, plan, "launches.0.gpu_count") != 3 {
		t.Errorf("launches = %s", valueAt[types.List](t, plan, "launches"))
	}
	if n := len(valueAt[types.List](t, plan, "launches.0.processes").Elements()); n != 1 ||
		!valueAt[types.Int64](t, plan, "launches.0.processes.0.stage_id").IsNull() ||
		valueAt[string](t, plan, "launches.0.processes.0.role") != "head" ||
		valueAt[string](t, plan, "launches.0.processes.0.unit_name") != "vllm-omni.service" ||
		!valueAt[types.Object](t, plan, "launches.0.processes.0.systemd_dropin").IsNull() {
		t.Errorf("processes = %s", valueAt[types.List](t, plan, "launches.0.processes"))
	}

	prior, diags := readPriorOutputs(ctx, plan)
	if diags.HasError() {
		t.Fatal(diags)
	}
	prev, diags := previousAllocations(ctx, prior)
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := &pipeline.Allocations{
		Ports:   map[pipeline.HostKey]int{{Name: "api"}: 8091, {Name: "prefill_side_channel"}: 25201, {Name: "decode_side_channel"}: 25202},
		Devices: map[pipeline.HostKey][]int{{Name: "prefill"}: {0}, {Name: "decode"}: {1}, {Name: "stage:talker"}: {2}},
	}
	if !reflect.DeepEqual(prev, want) {
		t.Errorf("previous = %+v, want %+v", prev, want)
	}
}

// valueAt reads the attribute at a dotted path of a plan or a state
// ("stages.0.kv_role": a number is a list index) into T, a Go value or a
// framework value, as the framework's GetAttribute does; a diagnostic
// fails the test.
func valueAt[T any](t *testing.T, from attributeGetter, dotted string) T {
	t.Helper()
	var p path.Path
	for i, step := range strings.Split(dotted, ".") {
		index, err := strconv.Atoi(step)
		switch {
		case i == 0:
			p = path.Root(step)
		case err == nil:
			p = p.AtListIndex(index)
		default:
			p = p.AtName(step)
		}
	}
	var v T
	if diags := from.GetAttribute(context.Background(), p, &v); diags.HasError() {
		t.Fatalf("%s: %v", dotted, diags)
	}
	return v
}

func TestPreviousAllocations_NoState(t *testing.T) {
	prev, diags := previousAllocations(context.Background(), priorOutputs{
		Ports: types.ListNull(outputElemType("ports")), Stages: types.ListNull(outputElemType("stages")),
	})
	if prev != nil || diags.HasError() {
		t.Fatalf("got %v, %v", prev, diags)
	}
}

// A port without a name or a number is not kept: there is nothing to keep
// it as, and keeping it as port 0 would reserve nothing real.
func TestPreviousAllocations_SkipsIncompletePorts(t *testing.T) {
	ctx := context.Background()
	portType := outputObjectType("ports")
	port := func(name attr.Value, number attr.Value) attr.Value {
		return types.ObjectValueMust(portType.AttrTypes, map[string]attr.Value{
			"name": name, "port": number, "stage_id": types.Int64Null(), "host": types.StringNull(),
		})
	}
	ports := types.ListValueMust(portType, []attr.Value{
		port(types.StringValue("api"), types.Int64Value(8091)),
		port(types.StringValue("prefill_side_channel"), types.Int64Null()),
		port(types.StringNull(), types.Int64Value(25202)),
	})
	prev, diags := previousAllocations(ctx, priorOutputs{Ports: ports, Stages: types.ListValueMust(outputObjectType("stages"), nil)})
	if diags.HasError() {
		t.Fatal(diags)
	}
	if want := map[pipeline.HostKey]int{{Name: "api"}: 8091}; !reflect.DeepEqual(prev.Ports, want) {
		t.Errorf("ports = %v, want %v", prev.Ports, want)
	}
}

// A plan whose value is still null takes the outputs through SetAttribute,
// each read back into its framework value first; it ends up holding what a
// plan of the same inputs written in one step holds.
func TestSetOutputs_NullTargetGoesThroughSetAttribute(t *testing.T) {
	ctx := context.Background()
	out, diags := outputsFromResult(ctx, pipelineInputs{}, sampleResult())
	if diags.HasError() {
		t.Fatal(diags)
	}
	null := planWith(t, nil)
	if !null.Raw.IsNull() {
		t.Fatal("planWith(nil) is not a null plan")
	}
	if diags := setOutputs(ctx, &null, out); diags.HasError() {
		t.Fatal(diags)
	}
	var attrs map[string]tftypes.Value
	if err := null.Raw.As(&attrs); err != nil {
		t.Fatal(err)
	}
	for name, want := range out {
		if got := attrs[name]; !got.Equal(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// The allocations read back from a plan's outputs are the engine's own,
// each on its host, with the head: a plan across three hosts (the head
// among them) reads back as pipeline.Plan keyed it.
func TestPreviousAllocations_KeyedByHost(t *testing.T) {
	ctx := context.Background()
	res, ds := pipeline.Plan(pipeline.Spec{Model: seedModel,
		Prefill: pipeline.RoleSpec{Host: "10.0.0.1"}, Decode: pipeline.RoleSpec{Host: "10.0.0.2"},
		StageOverrides: map[string]pipeline.StageOverride{"code2wav": {Host: "10.0.0.3"}}})
	if res == nil {
		t.Fatal(ds)
	}
	out, diags := outputsFromResult(ctx, pipelineInputs{}, res)
	if diags.HasError() {
		t.Fatal(diags)
	}
	plan := planWith(t, map[string]any{"model": seedModel})
	if diags := setOutputs(ctx, &plan, out); diags.HasError() {
		t.Fatal(diags)
	}
	prior, diags := readPriorOutputs(ctx, plan)
	if diags.HasError() {
		t.Fatal(diags)
	}
	prev, diags := previousAllocations(ctx, prior)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !reflect.DeepEqual(*prev, res.Allocations) {
		t.Errorf("read back %+v,\nplanned   %+v", *prev, res.Allocations)
	}
	if prev.Head != "10.0.0.1" || prev.Devices[pipeline.HostKey{Host: "10.0.0.3", Name: "stage:code2wav"}] == nil {
		t.Errorf("allocations are not keyed by host: %+v", prev)
	}
}
