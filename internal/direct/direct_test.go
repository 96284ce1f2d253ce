package direct

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/provider"
	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

const seedModel = "Qwen/Qwen3-Omni-30B-A3B-Instruct"

// recordingServer counts the calls that reach it; with fail set it answers
// them with an error instead of passing them on.
type recordingServer struct {
	tfprotov6.ProviderServer
	calls int
	fail  bool
}

var errReachedFramework = errors.New("the call reached the framework")

func (r *recordingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.ReadResource(ctx, req)
}

func (r *recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.PlanResourceChange(ctx, req)
}

func (r *recordingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.ReadDataSource(ctx, req)
}

func (r *recordingServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.ValidateDataResourceConfig(ctx, req)
}

func (r *recordingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.ValidateResourceConfig(ctx, req)
}

func newFramework() tfprotov6.ProviderServer {
	return provider.NewProtocol6("test")()
}

// parityServers returns the framework's server and the direct one in front
// of it that cannot fall back to it: a call that reaches the framework
// through the direct side fails, so a parity test compares the two paths.
func parityServers(t testing.TB) (framework, direct tfprotov6.ProviderServer) {
	t.Helper()
	framework = newFramework()
	if _, err := framework.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	return framework, server{&recordingServer{ProviderServer: framework, fail: true}}
}

// resourceValue is a value of the object type typ (the resource's when
// nil): every attribute not in set is null.
func resourceValue(t testing.TB, typ tftypes.Type, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	if typ == nil {
		typ = provider.PDPipelineResourceType()
	}
	return testtool.Object(t, typ, set)
}

// attrType is the type of the attribute name of the object type typ.
func attrType(t testing.TB, typ tftypes.Type, name string) tftypes.Type {
	t.Helper()
	return testtool.AttributeType(t, typ, name)
}

func str(s string) tftypes.Value           { return tftypes.NewValue(tftypes.String, s) }
func num(f float64) tftypes.Value          { return tftypes.NewValue(tftypes.Number, big.NewFloat(f)) }
func unknown(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) }

func triggers(vals map[string]tftypes.Value) tftypes.Value {
	return tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, vals)
}

// seedWith is the seed's inputs (its model) with extra set over them.
func seedWith(extra map[string]tftypes.Value) map[string]tftypes.Value {
	out := map[string]tftypes.Value{"model": str(seedModel)}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// talkerOverride is a stage_overrides value setting one key of the talker.
func talkerOverride(key string, v tftypes.Value) tftypes.Value {
	talker := tftypes.Object{AttributeTypes: map[string]tftypes.Type{key: v.Type()}}
	return tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"talker": talker}},
		map[string]tftypes.Value{"talker": tftypes.NewValue(talker, map[string]tftypes.Value{key: v})})
}

func dynamicValue(t testing.TB, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(provider.PDPipelineResourceType(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// outputNames are the resource's computed attributes that cannot be set.
func outputNames(t testing.TB) []string {
	t.Helper()
	var names []string
	for name, a := range resourceSchema(t).Attributes {
		if a.IsComputed() && !a.IsOptional() {
			names = append(names, name)
		}
	}
	return names
}

// proposedNew is what Terraform proposes for a configuration: the
// configuration, with the outputs taken from the prior state on an update.
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
	for _, name := range outputNames(t) {
		out[name] = p[name]
	}
	return tftypes.NewValue(config.Type(), out)
}

// TestPlan_MatchesFramework: the direct path plans creates and updates as
// the framework does: planned state, replacement, private state and
// diagnostics.
func TestPlan_MatchesFramework(t *testing.T) {
	ctx := context.Background()
	framework, direct := parityServers(t)
	typ := provider.PDPipelineResourceType()
	saw := map[string]bool{}
	for _, tc := range planCases(t, framework) {
		t.Run(tc.name, func(t *testing.T) {
			req := planRequest(t, tc.config, tc.prior)
			want, err := framework.PlanResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := direct.PlanResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			comparePlans(t, typ, got, want)
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

// planCase is a configuration planned over a prior state (null: a create).
type planCase struct {
	name          string
	config, prior tftypes.Value
}

// planCases are TestPlan_MatchesFramework's: creates and updates, with
// errors, a warning, unknowns and every change of triggers. The prior
// states are the framework's plans of earlier creates.
func planCases(t *testing.T, framework tfprotov6.ProviderServer) []planCase {
	typ := provider.PDPipelineResourceType()
	null := tftypes.NewValue(typ, nil)
	obj, ok := typ.(tftypes.Object)
	if !ok {
		t.Fatalf("%s is not an object type", typ)
	}
	decodeType := obj.AttributeTypes["decode"]
	res := func(set map[string]tftypes.Value) tftypes.Value { return resourceValue(t, nil, set) }

	seed := seedWith(nil)
	withTriggers := seedWith(map[string]tftypes.Value{"triggers": triggers(map[string]tftypes.Value{"rev": str("1")})})
	overrides := seedWith(map[string]tftypes.Value{
		"stage_overrides": talkerOverride("max_num_seqs", num(8)),
		"decode":          resourceValue(t, decodeType, map[string]tftypes.Value{"max_num_seqs": num(32)}),
	})
	errs := seedWith(map[string]tftypes.Value{"gpus": num(2)})
	priorSeed := appliedCreate(t, framework, res(seed))
	priorTriggers := appliedCreate(t, framework, res(withTriggers))

	return []planCase{
		{"create the seed", res(seed), null},
		{"create with overrides", res(overrides), null},
		{"create with triggers", res(withTriggers), null},
		{"create with an unknown model", res(map[string]tftypes.Value{"model": unknown(tftypes.String)}), null},
		{"create with errors", res(errs), null},
		{"create with a warning", res(seedWith(map[string]tftypes.Value{
			"stage_overrides": talkerOverride("gpu_memory_utilization", num(0.88)),
		})), null},
		{"update, nothing changed", res(seed), priorSeed},
		{"update an input", res(overrides), priorSeed},
		{"update to errors", res(errs), priorSeed},
		{"update to an unknown input", res(seedWith(map[string]tftypes.Value{"api_port": unknown(tftypes.Number)})), priorSeed},
		{"update, triggers unchanged", res(withTriggers), priorTriggers},
		{"update, triggers changed", res(seedWith(map[string]tftypes.Value{"triggers": triggers(map[string]tftypes.Value{"rev": str("2")})})), priorTriggers},
		{"update, triggers added", res(withTriggers), priorSeed},
		{"update, triggers removed", res(seed), priorTriggers},
		{"update, triggers unknown", res(seedWith(map[string]tftypes.Value{"triggers": unknown(tftypes.Map{ElementType: tftypes.String})})), priorTriggers},
	}
}

// planRequest is Terraform's plan of config over prior.
func planRequest(t *testing.T, config, prior tftypes.Value) *tfprotov6.PlanResourceChangeRequest {
	return &tfprotov6.PlanResourceChangeRequest{
		TypeName:         provider.PDPipelineTypeName,
		Config:           dynamicValue(t, config),
		PriorState:       dynamicValue(t, prior),
		ProposedNewState: dynamicValue(t, proposedNew(t, config, prior)),
	}
}

// appliedCreate is the state after applying a create of config: the
// framework's plan.
func appliedCreate(t *testing.T, framework tfprotov6.ProviderServer, config tftypes.Value) tftypes.Value {
	typ := provider.PDPipelineResourceType()
	resp, err := framework.PlanResourceChange(context.Background(), planRequest(t, config, tftypes.NewValue(typ, nil)))
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, resp.Diagnostics)
	}
	v, err := resp.PlannedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// comparePlans fails when the direct path's plan differs from the
// framework's in anything Terraform reads.
func comparePlans(t *testing.T, typ tftypes.Type, got, want *tfprotov6.PlanResourceChangeResponse) {
	t.Helper()
	if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) {
		t.Errorf("diagnostics differ:\n direct    %v\n framework %v", got.Diagnostics, want.Diagnostics)
	}
	// Compared as values: tftypes writes a map's keys in Go's map order,
	// so the bytes of equal values can differ.
	if want.PlannedState == nil || got.PlannedState == nil {
		t.Fatalf("no planned state: direct %v, framework %v", got.PlannedState, want.PlannedState)
	}
	g, err1 := got.PlannedState.Unmarshal(typ)
	w, err2 := want.PlannedState.Unmarshal(typ)
	if err1 != nil || err2 != nil || !g.Equal(w) {
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

// TestRead_MatchesFramework: a refresh returns the state as the framework
// returns it.
func TestRead_MatchesFramework(t *testing.T) {
	ctx := context.Background()
	framework, direct := parityServers(t)
	typ := provider.PDPipelineResourceType()
	seed := dynamicValue(t, resourceValue(t, nil, seedWith(nil)))
	created, err := framework.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: provider.PDPipelineTypeName, Config: seed,
		PriorState: dynamicValue(t, tftypes.NewValue(typ, nil)), ProposedNewState: seed,
	})
	if err != nil || len(created.Diagnostics) > 0 {
		t.Fatalf("%v %v", err, created.Diagnostics)
	}
	for name, state := range map[string]*tfprotov6.DynamicValue{
		"a planned pipeline": created.PlannedState,
		"a null state":       dynamicValue(t, tftypes.NewValue(typ, nil)),
	} {
		t.Run(name, func(t *testing.T) {
			req := &tfprotov6.ReadResourceRequest{TypeName: provider.PDPipelineTypeName, CurrentState: state}
			want, err := framework.ReadResource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := direct.ReadResource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			g, err1 := got.NewState.Unmarshal(typ)
			w, err2 := want.NewState.Unmarshal(typ)
			if err1 != nil || err2 != nil || !g.Equal(w) || !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) ||
				string(got.Private) != string(want.Private) || got.Deferred != nil || want.Deferred != nil || got.NewIdentity != nil || want.NewIdentity != nil {
				t.Errorf("responses differ:\n direct    %+v\n framework %+v", got, want)
			}
		})
	}
}

// TestFallsBack: calls the direct path was not built for go to the
// framework unchanged; a create, an update and a refresh do not.
func TestFallsBack(t *testing.T) {
	t.Run("plan", fallsBackOnPlans)
	t.Run("read", fallsBackOnReads)
	t.Run("data source", fallsBackOnDataSources)
	t.Run("resource validation", fallsBackOnResourceValidations)
}

// fallBackFixture is the seed's configuration and a null one, of the
// resource's type, as the protocol carries them.
func fallBackFixture(t *testing.T) (seed, null *tfprotov6.DynamicValue) {
	return dynamicValue(t, resourceValue(t, nil, seedWith(nil))), dynamicValue(t, tftypes.NewValue(provider.PDPipelineResourceType(), nil))
}

func fallsBackOnPlans(t *testing.T) {
	seed, null := fallBackFixture(t)
	name := provider.PDPipelineTypeName
	for _, tc := range []struct {
		name        string
		req         *tfprotov6.PlanResourceChangeRequest
		toFramework bool
	}{
		{"a create", &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: seed, PriorState: null, ProposedNewState: seed}, false},
		{"a destroy", &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: null, PriorState: seed, ProposedNewState: null}, true},
		{"private state", &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: seed, PriorState: null, ProposedNewState: seed, PriorPrivate: []byte(`{"k":"dg=="}`)}, true},
		{"another type", &tfprotov6.PlanResourceChangeRequest{TypeName: "omni_nothing", Config: seed, PriorState: null, ProposedNewState: seed}, true},
		{"a state that does not decode", &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: seed, PriorState: &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}}, ProposedNewState: seed}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &recordingServer{ProviderServer: newFramework()}
			if _, err := (server{inner}).PlanResourceChange(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			if got := inner.calls == 1; got != tc.toFramework {
				t.Errorf("reached the framework: %v, want %v", got, tc.toFramework)
			}
		})
	}
}

func fallsBackOnReads(t *testing.T) {
	seed, _ := fallBackFixture(t)
	name := provider.PDPipelineTypeName
	for _, tc := range []struct {
		name        string
		req         *tfprotov6.ReadResourceRequest
		toFramework bool
	}{
		{"a refresh", &tfprotov6.ReadResourceRequest{TypeName: name, CurrentState: seed}, false},
		{"private state", &tfprotov6.ReadResourceRequest{TypeName: name, CurrentState: seed, Private: []byte(`{"k":"dg=="}`)}, true},
		{"another type", &tfprotov6.ReadResourceRequest{TypeName: "omni_nothing", CurrentState: seed}, true},
		{"no state", &tfprotov6.ReadResourceRequest{TypeName: name}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &recordingServer{ProviderServer: newFramework()}
			if _, err := (server{inner}).ReadResource(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			if got := inner.calls == 1; got != tc.toFramework {
				t.Errorf("reached the framework: %v, want %v", got, tc.toFramework)
			}
		})
	}
}

// fallsBackOnDataSources: a data source's validation and read both go to
// the framework, or neither.
func fallsBackOnDataSources(t *testing.T) {
	dsType := provider.PDPipelineDataSourceType()
	dsConfig := func(v tftypes.Value) *tfprotov6.DynamicValue {
		dv, err := tfprotov6.NewDynamicValue(dsType, v)
		if err != nil {
			t.Fatal(err)
		}
		return &dv
	}
	name := provider.PDPipelineTypeName
	for _, tc := range []struct {
		name        string
		config      *tfprotov6.DynamicValue
		toFramework bool
	}{
		{"a configuration", dsConfig(resourceValue(t, dsType, seedWith(nil))), false},
		{"a null configuration", dsConfig(tftypes.NewValue(dsType, nil)), true},
		{"an unknown configuration", dsConfig(tftypes.NewValue(dsType, tftypes.UnknownValue)), true},
		{"no configuration", nil, true},
		{"one that does not decode", &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &recordingServer{ProviderServer: newFramework()}
			ctx := context.Background()
			if _, err := (server{inner}).ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: name, Config: tc.config}); err != nil {
				t.Fatal(err)
			}
			if _, err := (server{inner}).ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: name, Config: tc.config}); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 2, false: 0}[tc.toFramework]; inner.calls != want {
				t.Errorf("%d calls reached the framework, want %d", inner.calls, want)
			}
		})
	}
}

func fallsBackOnResourceValidations(t *testing.T) {
	seed, null := fallBackFixture(t)
	for _, tc := range []struct {
		name        string
		config      *tfprotov6.DynamicValue
		toFramework bool
	}{
		{"a configuration", seed, false},
		{"a null configuration", null, true},
		{"an unknown configuration", dynamicValue(t, tftypes.NewValue(provider.PDPipelineResourceType(), tftypes.UnknownValue)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &recordingServer{ProviderServer: newFramework()}
			req := &tfprotov6.ValidateResourceConfigRequest{TypeName: provider.PDPipelineTypeName, Config: tc.config}
			if _, err := (server{inner}).ValidateResourceConfig(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if got := inner.calls == 1; got != tc.toFramework {
				t.Errorf("reached the framework: %v, want %v", got, tc.toFramework)
			}
		})
	}
}

// A data source read gives what the framework's does: the same state and
// the same diagnostics, for the seed, a layout across hosts, a release
// with one process, and inputs the plan refuses.
func TestReadDataSource_MatchesFramework(t *testing.T) {
	ctx := context.Background()
	framework, direct := parityServers(t)
	typ := provider.PDPipelineDataSourceType()
	for name, set := range map[string]map[string]tftypes.Value{
		"seed":            {"model": str(seedModel)},
		"one process":     {"model": str(seedModel), "vllm_omni_version": str("0.22.0")},
		"refused":         {"model": str(seedModel), "gpus": num(1)},
		"unknown release": {"model": str(seedModel), "vllm_omni_version": str("9.9.9")},
	} {
		t.Run(name, func(t *testing.T) {
			config, err := tfprotov6.NewDynamicValue(typ, resourceValue(t, typ, set))
			if err != nil {
				t.Fatal(err)
			}
			req := &tfprotov6.ReadDataSourceRequest{TypeName: provider.PDPipelineTypeName, Config: &config}
			want, err := framework.ReadDataSource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := direct.ReadDataSource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) {
				t.Errorf("diagnostics differ:\n direct    %v\n framework %v", got.Diagnostics, want.Diagnostics)
			}
			if (got.State == nil) != (want.State == nil) {
				t.Fatalf("state: direct %v, framework %v", got.State, want.State)
			}
			if want.State == nil {
				return
			}
			g, err := got.State.Unmarshal(typ)
			if err != nil {
				t.Fatal(err)
			}
			w, err := want.State.Unmarshal(typ)
			if err != nil {
				t.Fatal(err)
			}
			if !g.Equal(w) {
				t.Errorf("states differ:\n direct    %v\n framework %v", g, w)
			}
		})
	}
}

// TestValidate_MatchesFramework: both entities' validation answers what
// the framework's does, for a valid configuration, schema errors, engine
// errors beside them, and unknowns. The framework reports the schema's
// errors in map order, so the diagnostics compare as sorted sets.
func TestValidate_MatchesFramework(t *testing.T) {
	ctx := context.Background()
	framework, direct := parityServers(t)
	portRange := func(first, last float64) tftypes.Value {
		typ := attrType(t, provider.PDPipelineResourceType(), "port_range")
		return tftypes.NewValue(typ, map[string]tftypes.Value{"first": num(first), "last": num(last)})
	}
	cases := map[string]map[string]tftypes.Value{
		"seed":            {"model": str(seedModel)},
		"no model":        {},
		"schema errors":   {"model": str(seedModel), "format": str("yaml"), "gpus": num(4.5), "port_range": portRange(30010, 30000)},
		"engine beside":   {"model": str(seedModel), "gpus": num(4.5), "vllm_omni_version": str("9.9.9")},
		"engine only":     {"model": str(seedModel), "gpus": num(1)},
		"conflict":        {"model": str(seedModel), "preset": str("qwen3_omni_moe"), "base_config": str("stage_args: []")},
		"unknown":         {"model": unknown(tftypes.String), "gpus": num(4.5)},
		"empty model":     {"model": str("")},
		"api port zero":   {"model": str(seedModel), "api_port": num(0)},
		"unknown version": {"model": str(seedModel), "vllm_omni_version": unknown(tftypes.String)},
	}
	inOrder := map[string]bool{"seed": true, "engine beside": true, "engine only": true, "unknown": true, "no model": true}
	sorted := func(ds []*tfprotov6.Diagnostic) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = fmt.Sprintf("%s|%s|%s|%v", d.Severity, d.Summary, d.Detail, d.Attribute)
		}
		sort.Strings(out)
		return out
	}
	reported := 0
	for _, entity := range []struct {
		name     string
		typ      tftypes.Type
		validate func(tfprotov6.ProviderServer, *tfprotov6.DynamicValue) ([]*tfprotov6.Diagnostic, error)
	}{
		{"data source", provider.PDPipelineDataSourceType(), func(s tfprotov6.ProviderServer, c *tfprotov6.DynamicValue) ([]*tfprotov6.Diagnostic, error) {
			resp, err := s.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: provider.PDPipelineTypeName, Config: c})
			if err != nil {
				return nil, err
			}
			return resp.Diagnostics, nil
		}},
		{"resource", provider.PDPipelineResourceType(), func(s tfprotov6.ProviderServer, c *tfprotov6.DynamicValue) ([]*tfprotov6.Diagnostic, error) {
			resp, err := s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: provider.PDPipelineTypeName, Config: c})
			if err != nil {
				return nil, err
			}
			return resp.Diagnostics, nil
		}},
	} {
		for name, set := range cases {
			t.Run(entity.name+"/"+name, func(t *testing.T) {
				config, err := tfprotov6.NewDynamicValue(entity.typ, resourceValue(t, entity.typ, set))
				if err != nil {
					t.Fatal(err)
				}
				want, err := entity.validate(framework, &config)
				if err != nil {
					t.Fatal(err)
				}
				got, err := entity.validate(direct, &config)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := sorted(got), sorted(want); !reflect.DeepEqual(g, w) {
					t.Errorf("diagnostics differ:\n direct    %q\n framework %q", g, w)
				}
				// With at most one schema error the framework's order is
				// fixed: the engine's errors, then the schema's.
				if inOrder[name] && !reflect.DeepEqual(got, want) {
					t.Errorf("diagnostics in another order:\n direct    %v\n framework %v", got, want)
				}
				reported += len(want)
			})
		}
	}
	// The cases must trip checks, or the comparison proves little.
	if reported < 16 {
		t.Errorf("the cases produced only %d diagnostics", reported)
	}
}
