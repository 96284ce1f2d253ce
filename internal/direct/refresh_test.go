package direct

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"

	"github.com/omnipd/terraform-provider-omni/internal/provider"
)

// TestRead_TerraformSeesNoDrift replays what Terraform 1.11 does with a
// refresh, with its own value library: the state file holds the applied
// state as cty's JSON, the state before the refresh is that JSON decoded,
// the refreshed state is ReadResource's answer decoded, and a refresh-only
// plan is applyable (exit code 2 under -detailed-exitcode) unless the two
// are reflect.DeepEqual (writeReadState says where). Numbers of every
// kind the state holds are in the configurations: ports and counts,
// fractions (gpu_memory_utilization), a set (reserved_ports), and numbers
// inside dynamic values (engine_args, extra_config, stage_overrides).
func TestRead_TerraformSeesNoDrift(t *testing.T) {
	framework, direct := parityServers(t)
	for name, config := range noDriftConfigs(t) {
		t.Run(name, func(t *testing.T) {
			refreshKeepsState(t, framework, direct, config)
			dataSourceOutputKeepsState(t, direct, config)
		})
	}
}

// noDriftConfigs are the seed, and one with numbers of every kind.
func noDriftConfigs(t *testing.T) map[string]map[string]tftypes.Value {
	typ := provider.PDPipelineResourceType()
	obj := func(attrs map[string]tftypes.Value) tftypes.Value {
		types := map[string]tftypes.Type{}
		for k, v := range attrs {
			types[k] = v.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, attrs)
	}
	role := func(attrs map[string]tftypes.Value) tftypes.Value {
		return resourceValue(t, attrType(t, typ, "prefill"), attrs)
	}
	return map[string]map[string]tftypes.Value{
		"the seed": seedWith(nil),
		"numbers of every kind": seedWith(map[string]tftypes.Value{
			"prefill": role(map[string]tftypes.Value{
				"gpu_memory_utilization": num(0.85),
				"max_num_seqs":           num(8),
				"engine_args":            obj(map[string]tftypes.Value{"max_num_batched_tokens": num(8192), "swap_space": num(1.5)}),
			}),
			"decode": role(map[string]tftypes.Value{"gpu_memory_utilization": num(0.9)}),
			"connector": resourceValue(t, attrType(t, typ, "connector"), map[string]tftypes.Value{
				"extra_config": obj(map[string]tftypes.Value{"backends": tftypes.NewValue(tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String}},
					[]tftypes.Value{str("UCX")}), "num_threads": num(4)}),
			}),
			"reserved_ports":  tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number}, []tftypes.Value{num(25205), num(25207)}),
			"stage_overrides": talkerOverride("gpu_memory_utilization", num(0.3)),
			"api_port":        num(8091),
		}),
	}
}

// refreshKeepsState: the resource's state, planned by the framework,
// stored as JSON and refreshed by the direct path, reads back as the very
// value the state file holds.
func refreshKeepsState(t *testing.T, framework, direct tfprotov6.ProviderServer, config map[string]tftypes.Value) {
	ctx := context.Background()
	typ := provider.PDPipelineResourceType()
	ctyType := ctyTypeOf(t, typ)
	cfg := dynamicValue(t, resourceValue(t, nil, config))
	planned, err := framework.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: provider.PDPipelineTypeName, Config: cfg,
		PriorState: dynamicValue(t, tftypes.NewValue(typ, nil)), ProposedNewState: cfg,
	})
	if err != nil || len(planned.Diagnostics) > 0 {
		t.Fatalf("%v %v", err, planned.Diagnostics)
	}
	// Apply stores the plan; Terraform writes it as JSON.
	applied, err := ctymsgpack.Unmarshal(planned.PlannedState.MsgPack, ctyType)
	if err != nil {
		t.Fatal(err)
	}
	before, stateJSON, prior := throughStateFile(t, applied, ctyType)
	resp, err := direct.ReadResource(ctx, &tfprotov6.ReadResourceRequest{
		TypeName: provider.PDPipelineTypeName, CurrentState: &tfprotov6.DynamicValue{MsgPack: prior},
	})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("%v %v", err, resp.Diagnostics)
	}
	refreshed, err := ctymsgpack.Unmarshal(resp.NewState.MsgPack, ctyType)
	if err != nil {
		t.Fatal(err)
	}
	if !refreshed.RawEquals(before) {
		t.Fatalf("the refresh changed the state:\n before %#v\n after  %#v", before, refreshed)
	}
	if !reflect.DeepEqual(refreshed, before) {
		t.Errorf("the refreshed state equals the state before it but is not reflect.DeepEqual to it, " +
			"so Terraform reports drift on every refresh-only plan")
	}
	again, err := ctyjson.Marshal(refreshed, ctyType)
	if err != nil || !bytes.Equal(again, stateJSON) {
		t.Errorf("the refreshed state writes other JSON (%v):\n %s\n %s", err, again, stateJSON)
	}
}

// dataSourceOutputKeepsState: a data source's value reaches the state file
// through an output, as JSON, and is read again on the next plan as the
// same value.
func dataSourceOutputKeepsState(t *testing.T, direct tfprotov6.ProviderServer, config map[string]tftypes.Value) {
	dsConfig := resourceValue(t, provider.PDPipelineDataSourceType(), config)
	read, err := direct.ReadDataSource(context.Background(), &tfprotov6.ReadDataSourceRequest{
		TypeName: provider.PDPipelineTypeName, Config: dataSourceValue(t, dsConfig),
	})
	if err != nil || len(read.Diagnostics) > 0 {
		t.Fatalf("%v %v", err, read.Diagnostics)
	}
	dsType := ctyTypeOf(t, provider.PDPipelineDataSourceType())
	ds, err := ctymsgpack.Unmarshal(read.State.MsgPack, dsType)
	if err != nil {
		t.Fatal(err)
	}
	output, err := ctyjson.Marshal(ds, dsType)
	if err != nil {
		t.Fatal(err)
	}
	if stored, err := ctyjson.Unmarshal(output, dsType); err != nil || !reflect.DeepEqual(stored, ds) {
		t.Errorf("a data source's state, passed on by an output, is not reflect.DeepEqual to itself read "+
			"back from the state file (%v), so Terraform reports drift on every refresh-only plan", err)
	}
}

// TestWriteReadState_ReadsBack: the read writer writes what
// tftypes reads back as the same value, numbers as text included, and the
// plan's writer is left as tftypes writes.
func TestWriteReadState_ReadsBack(t *testing.T) {
	typ := provider.PDPipelineResourceType()
	v := resourceValue(t, nil, seedWith(map[string]tftypes.Value{
		"api_port":        num(8091),
		"stage_overrides": talkerOverride("gpu_memory_utilization", num(0.3)),
	}))
	got, err := writeReadState(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := got.Unmarshal(typ)
	if err != nil || !back.Equal(v) {
		t.Fatalf("reads back as %v (%v)", back, err)
	}
	if !bytes.Contains(got.MsgPack, append([]byte("api_port"), msgpackString(t, "8091")...)) {
		t.Error("api_port is not written as the text 8091")
	}
	plain, err := writeState(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain.MsgPack, msgpackString(t, "8091")) {
		t.Error("the plan's writer writes api_port as text")
	}
}

func msgpackString(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := msgpack.NewEncoder(&buf).EncodeString(s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ctyTypeOf is the cty type of a tftypes type, through the protocol's
// JSON for types, which both libraries read.
func ctyTypeOf(t *testing.T, typ tftypes.Type) cty.Type {
	t.Helper()
	j, err := typeJSON(typ)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := ctyjson.UnmarshalType(j)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

func dataSourceValue(t testing.TB, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(provider.PDPipelineDataSourceType(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// TestWriteReadState_TerraformSeesNoDriftByProperty replays Terraform's
// refresh (TestRead_TerraformSeesNoDrift) on random values of both
// schemas' types, numbers of every kind and dynamic values among them:
// the value the provider wrote at apply, stored as JSON in the state file
// (unknowns as nulls, as Terraform stores them), read back from it, sent
// to the provider, written back by a read, must be reflect.DeepEqual to
// the value read from the file. tftypes reads what a read writes as the
// value it was given.
func TestWriteReadState_TerraformSeesNoDriftByProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []tftypes.Type{provider.PDPipelineDataSourceType(), provider.PDPipelineResourceType()} {
		ctyType := ctyTypeOf(t, typ)
		for range 300 {
			applied, err := tfprotov6.NewDynamicValue(typ, randomValue(r, typ, true))
			if err != nil {
				t.Fatal(err)
			}
			v, err := ctymsgpack.Unmarshal(applied.MsgPack, ctyType)
			if err != nil {
				t.Fatal(err)
			}
			// JSON holds no infinity (Terraform fails to store one), so
			// the random infinities become the largest float64.
			v, err = cty.Transform(v, func(_ cty.Path, n cty.Value) (cty.Value, error) {
				if n.Type() == cty.Number && n.IsKnown() && !n.IsNull() && n.AsBigFloat().IsInf() {
					return cty.NumberFloatVal(float64(n.AsBigFloat().Sign()) * math.MaxFloat64), nil
				}
				return n, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			before, _, prior := throughStateFile(t, cty.UnknownAsNull(v), ctyType)
			state, err := (&tfprotov6.DynamicValue{MsgPack: prior}).Unmarshal(typ)
			if err != nil {
				t.Fatal(err)
			}
			read, err := writeReadState(typ, state)
			if err != nil {
				t.Fatalf("writeReadState(%v): %v", state, err)
			}
			if back, err := read.Unmarshal(typ); err != nil || !back.Equal(state) {
				t.Fatalf("tftypes reads %v back as %v (%v)", state, back, err)
			}
			after, err := ctymsgpack.Unmarshal(read.MsgPack, ctyType)
			if err != nil {
				t.Fatal(err)
			}
			if reflect.DeepEqual(after, before) {
				continue
			}
			if before.IsNull() || after.IsNull() {
				t.Fatalf("Terraform reads a read as %#v, its state file as %#v", after, before)
			}
			for name := range ctyType.AttributeTypes() {
				if a, b := after.GetAttr(name), before.GetAttr(name); !reflect.DeepEqual(a, b) {
					t.Fatalf("Terraform reads %s back from a read as another value than from its state file:\n %.300s\n %.300s",
						name, a.GoString(), b.GoString())
				}
			}
		}
	}
}

// throughStateFile is v as Terraform reads it back from its state file,
// the JSON it writes there, and the value read back as the msgpack it
// then sends the provider as the prior state.
func throughStateFile(t *testing.T, v cty.Value, ty cty.Type) (cty.Value, []byte, []byte) {
	t.Helper()
	stateJSON, err := ctyjson.Marshal(v, ty)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := ctyjson.Unmarshal(stateJSON, ty)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := ctymsgpack.Marshal(stored, ty)
	if err != nil {
		t.Fatal(err)
	}
	return stored, stateJSON, sent
}
