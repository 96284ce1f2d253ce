package provider

import (
	"context"
	"math/big"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// resourceValue is an omni_pd_pipeline resource value: every attribute not
// in set is null.
func resourceValue(t testing.TB, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	return objectValue(t, pdPipelineResourceType(), set)
}

// resourceObject is a value for a nested-object attribute of the resource:
// the attributes in set, the others null.
func resourceObject(t testing.TB, attribute string, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	return objectValue(t, attributeType(t, pdPipelineResourceType(), attribute), set)
}

// proposedNew is what Terraform proposes for a configuration: the
// configuration, with the computed attributes (the outputs) taken from the
// prior state on an update.
func proposedNew(t testing.TB, config, prior tftypes.Value) tftypes.Value {
	t.Helper()
	if prior.IsNull() {
		return config
	}
	var c, p map[string]tftypes.Value
	if err := config.As(&c); err != nil {
		t.Fatal(err)
	}
	if err := prior.As(&p); err != nil {
		t.Fatal(err)
	}
	out := map[string]tftypes.Value{}
	for k, v := range c {
		out[k] = v
	}
	for _, name := range pipelineOutputNames {
		out[name] = p[name]
	}
	return tftypes.NewValue(config.Type(), out)
}

func dynamicValue(t testing.TB, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(pdPipelineResourceType(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

func triggersValue(vals map[string]tftypes.Value) tftypes.Value {
	return tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, vals)
}

// TestDirectPlan_MatchesFramework: directServer plans creates and updates
// exactly as the framework does, byte for byte: planned state, replacement,
// private state and diagnostics.
func TestDirectPlan_MatchesFramework(t *testing.T) {
	ctx := context.Background()
	framework, direct := parityServers(t)
	typ := pdPipelineResourceType()
	null := tftypes.NewValue(typ, nil)

	// plan asks the framework for the plan of config over prior.
	plan := func(t *testing.T, config, prior tftypes.Value) *tfprotov6.PlanResourceChangeRequest {
		return &tfprotov6.PlanResourceChangeRequest{
			TypeName:         pdPipelineTypeName,
			Config:           dynamicValue(t, config),
			PriorState:       dynamicValue(t, prior),
			ProposedNewState: dynamicValue(t, proposedNew(t, config, prior)),
		}
	}
	// applied is the state after applying a create of config: the plan.
	applied := func(t *testing.T, config tftypes.Value) tftypes.Value {
		resp, err := framework.PlanResourceChange(ctx, plan(t, config, null))
		if err != nil || len(resp.Diagnostics) > 0 {
			t.Fatalf("plan: %v %v", err, resp.Diagnostics)
		}
		v, err := resp.PlannedState.Unmarshal(typ)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	seed := map[string]tftypes.Value{"model": tfStr(seedModel)}
	withTriggers := seedWith(map[string]tftypes.Value{"triggers": triggersValue(map[string]tftypes.Value{"rev": tfStr("1")})})
	overrides := seedWith(map[string]tftypes.Value{
		"stage_overrides": talkerOverride("max_num_seqs", tfNumber(8)),
		"decode":          resourceObject(t, "decode", map[string]tftypes.Value{"max_num_seqs": tfNumber(32)}),
	})
	priorSeed := applied(t, resourceValue(t, seed))
	priorTriggers := applied(t, resourceValue(t, withTriggers))

	cases := []struct {
		name          string
		config, prior tftypes.Value
	}{
		{"create the seed", resourceValue(t, seed), null},
		{"create with overrides", resourceValue(t, overrides), null},
		{"create with triggers", resourceValue(t, withTriggers), null},
		{"create with an unknown model", resourceValue(t, map[string]tftypes.Value{"model": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)}), null},
		{"create with errors", resourceValue(t, seedWith(map[string]tftypes.Value{"gpus": tfNumber(2)})), null},
		{"create with a warning", resourceValue(t, seedWith(map[string]tftypes.Value{
			"stage_overrides": talkerOverride("gpu_memory_utilization", tftypes.NewValue(tftypes.Number, big.NewFloat(0.88))),
		})), null},
		{"update, nothing changed", resourceValue(t, seed), priorSeed},
		{"update an input", resourceValue(t, overrides), priorSeed},
		{"update to errors", resourceValue(t, seedWith(map[string]tftypes.Value{"gpus": tfNumber(2)})), priorSeed},
		{"update to an unknown input", resourceValue(t, seedWith(map[string]tftypes.Value{"api_port": tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)})), priorSeed},
		{"update, triggers unchanged", resourceValue(t, withTriggers), priorTriggers},
		{"update, triggers changed", resourceValue(t, seedWith(map[string]tftypes.Value{"triggers": triggersValue(map[string]tftypes.Value{"rev": tfStr("2")})})), priorTriggers},
		{"update, triggers added", resourceValue(t, withTriggers), priorSeed},
		{"update, triggers removed", resourceValue(t, seed), priorTriggers},
		{"update, triggers unknown", resourceValue(t, seedWith(map[string]tftypes.Value{"triggers": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, tftypes.UnknownValue)})), priorTriggers},
	}
	saw := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := plan(t, tc.config, tc.prior)
			want, err := framework.PlanResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := direct.PlanResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) {
				t.Errorf("diagnostics differ:\n direct    %v\n framework %v", got.Diagnostics, want.Diagnostics)
			}
			if want.PlannedState == nil || got.PlannedState == nil || string(got.PlannedState.MsgPack) != string(want.PlannedState.MsgPack) {
				g, _ := got.PlannedState.Unmarshal(typ)
				w, _ := want.PlannedState.Unmarshal(typ)
				t.Errorf("planned states differ:\n direct    %v\n framework %v", g, w)
			}
			if !samePaths(got.RequiresReplace, want.RequiresReplace) {
				t.Errorf("requires replace: direct %v, framework %v", got.RequiresReplace, want.RequiresReplace)
			}
			if string(got.PlannedPrivate) != string(want.PlannedPrivate) || got.Deferred != nil || want.Deferred != nil ||
				got.PlannedIdentity != nil || want.PlannedIdentity != nil ||
				got.UnsafeToUseLegacyTypeSystem != want.UnsafeToUseLegacyTypeSystem { //nolint:staticcheck // compared so that it stays equal
				t.Errorf("the rest of the response differs:\n direct    %+v\n framework %+v", got, want)
			}
			for _, d := range want.Diagnostics {
				saw[string(d.Severity)] = true
			}
			if len(want.RequiresReplace) > 0 {
				saw["replace"] = true
			}
		})
	}
	// The table must reach errors, warnings and replacements, or the
	// comparison above proves less than it claims.
	for _, k := range []string{string(tfprotov6.DiagnosticSeverityError), string(tfprotov6.DiagnosticSeverityWarning), "replace"} {
		if !saw[k] {
			t.Errorf("no case produced %s", k)
		}
	}
}

func samePaths(a, b []*tftypes.AttributePath) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// TestDirectRead_ResourceMatchesFramework: a refresh returns the state as
// the framework returns it.
func TestDirectRead_ResourceMatchesFramework(t *testing.T) {
	ctx := context.Background()
	framework, direct := parityServers(t)
	typ := pdPipelineResourceType()
	created, err := framework.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName:         pdPipelineTypeName,
		Config:           dynamicValue(t, resourceValue(t, map[string]tftypes.Value{"model": tfStr(seedModel)})),
		PriorState:       dynamicValue(t, tftypes.NewValue(typ, nil)),
		ProposedNewState: dynamicValue(t, resourceValue(t, map[string]tftypes.Value{"model": tfStr(seedModel)})),
	})
	if err != nil || len(created.Diagnostics) > 0 {
		t.Fatalf("%v %v", err, created.Diagnostics)
	}
	for name, state := range map[string]*tfprotov6.DynamicValue{
		"a planned pipeline": created.PlannedState,
		"a null state":       dynamicValue(t, tftypes.NewValue(typ, nil)),
	} {
		t.Run(name, func(t *testing.T) {
			req := &tfprotov6.ReadResourceRequest{TypeName: pdPipelineTypeName, CurrentState: state}
			want, err := framework.ReadResource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := direct.ReadResource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("responses differ:\n direct    %+v\n framework %+v", got, want)
			}
		})
	}
}

// TestDirectResource_FallsBack: resource calls the direct path was not
// built for go to the framework unchanged; a create and a refresh do not.
func TestDirectResource_FallsBack(t *testing.T) {
	typ := pdPipelineResourceType()
	seed := dynamicValue(t, resourceValue(t, map[string]tftypes.Value{"model": tfStr(seedModel)}))
	null := dynamicValue(t, tftypes.NewValue(typ, nil))
	plans := []struct {
		name        string
		req         *tfprotov6.PlanResourceChangeRequest
		toFramework bool
	}{
		{"a create", &tfprotov6.PlanResourceChangeRequest{TypeName: pdPipelineTypeName, Config: seed, PriorState: null, ProposedNewState: seed}, false},
		{"a destroy", &tfprotov6.PlanResourceChangeRequest{TypeName: pdPipelineTypeName, Config: null, PriorState: seed, ProposedNewState: null}, true},
		{"private state", &tfprotov6.PlanResourceChangeRequest{TypeName: pdPipelineTypeName, Config: seed, PriorState: null, ProposedNewState: seed, PriorPrivate: []byte(`{"k":"dg=="}`)}, true},
		{"another type", &tfprotov6.PlanResourceChangeRequest{TypeName: "omni_nothing", Config: seed, PriorState: null, ProposedNewState: seed}, true},
		{"a state that does not decode", &tfprotov6.PlanResourceChangeRequest{TypeName: pdPipelineTypeName, Config: seed, PriorState: &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}}, ProposedNewState: seed}, true},
	}
	for _, tc := range plans {
		t.Run("plan "+tc.name, func(t *testing.T) {
			inner := &recordingServer{ProviderServer: providerserver.NewProtocol6(New("test")())()}
			if _, err := (directServer{inner}).PlanResourceChange(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			if got := inner.calls == 1; got != tc.toFramework {
				t.Errorf("reached the framework: %v, want %v", got, tc.toFramework)
			}
		})
	}
	reads := []struct {
		name        string
		req         *tfprotov6.ReadResourceRequest
		toFramework bool
	}{
		{"a refresh", &tfprotov6.ReadResourceRequest{TypeName: pdPipelineTypeName, CurrentState: seed}, false},
		{"private state", &tfprotov6.ReadResourceRequest{TypeName: pdPipelineTypeName, CurrentState: seed, Private: []byte(`{"k":"dg=="}`)}, true},
		{"another type", &tfprotov6.ReadResourceRequest{TypeName: "omni_nothing", CurrentState: seed}, true},
		{"no state", &tfprotov6.ReadResourceRequest{TypeName: pdPipelineTypeName}, true},
	}
	for _, tc := range reads {
		t.Run("read "+tc.name, func(t *testing.T) {
			inner := &recordingServer{ProviderServer: providerserver.NewProtocol6(New("test")())()}
			if _, err := (directServer{inner}).ReadResource(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			if got := inner.calls == 1; got != tc.toFramework {
				t.Errorf("reached the framework: %v, want %v", got, tc.toFramework)
			}
		})
	}
}
