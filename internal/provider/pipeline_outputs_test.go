package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
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

// Outputs written into a plan read back into the model, and from there into
// the allocations the next plan keeps: the schema, the model structs and
// the conversions agree.
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
	var m pipelineResourceModel
	if diags := plan.Get(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}

	var stages []stageModel
	m.Stages.ElementsAs(ctx, &stages, false)
	if len(stages) != 3 || !stages[2].KVRole.IsNull() || !stages[2].BootstrapPort.IsNull() || !stages[0].Host.IsNull() {
		t.Errorf("stages = %+v", stages)
	}
	if stages[0].Inputs.IsNull() || len(stages[0].Inputs.Elements()) != 0 {
		t.Errorf("a stage without inputs must have an empty list, got %s", stages[0].Inputs)
	}
	var launches []launchModel
	m.Launches.ElementsAs(ctx, &launches, false)
	if len(launches) != 1 || launches[0].Env.IsNull() || launches[0].Host.ValueString() != pipeline.SingleHost || launches[0].GPUCount.ValueInt64() != 3 {
		t.Errorf("launches = %+v", launches)
	}
	var procs []processModel
	launches[0].Processes.ElementsAs(ctx, &procs, false)
	if len(procs) != 1 || !procs[0].StageID.IsNull() || procs[0].Role.ValueString() != "head" || procs[0].UnitName.ValueString() != "vllm-omni.service" ||
		!procs[0].SystemdDropIn.IsNull() {
		t.Errorf("processes = %+v", procs)
	}

	prev, diags := previousAllocations(ctx, m.pipelineOutputs)
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

func TestPreviousAllocations_NoState(t *testing.T) {
	prev, diags := previousAllocations(context.Background(), pipelineOutputs{
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
	prev, diags := previousAllocations(ctx, pipelineOutputs{Ports: ports, Stages: types.ListValueMust(outputObjectType("stages"), nil)})
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
	var m pipelineResourceModel
	if diags := plan.Get(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}
	prev, diags := previousAllocations(ctx, m.pipelineOutputs)
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
