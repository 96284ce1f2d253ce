package direct

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/provider"
)

// An objectInput is one object input (or stage_overrides, the dynamic
// one) with a known value and the ways it can be unknown at plan.
type objectInput struct {
	name string
	// known is the input as written.
	known func(t testing.TB) tftypes.Value
	// unknowns are the input with part of it unknown, by name; "whole" is
	// the input unknown as a whole, as the protocol carries it.
	unknowns map[string]func(t testing.TB) tftypes.Value
}

// dynObj is an object value for a dynamic attribute.
func dynObj(attrs map[string]tftypes.Value) tftypes.Value {
	types := map[string]tftypes.Type{}
	for k, v := range attrs {
		types[k] = v.Type()
	}
	return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, attrs)
}

// objectInputs are every object input of the schema and every dynamic
// attribute inside one; TestPlan_UnknownInputsByProperty checks that the
// list covers the schema.
func objectInputs() []objectInput {
	typ := provider.PDPipelineResourceType()
	nested := func(name string, set func() map[string]tftypes.Value, dynamic string, dynKeys map[string]tftypes.Value) objectInput {
		in := objectInput{name: name, unknowns: map[string]func(testing.TB) tftypes.Value{}}
		in.known = func(t testing.TB) tftypes.Value { return resourceValue(t, attrType(t, typ, name), set()) }
		in.unknowns["whole"] = func(t testing.TB) tftypes.Value { return unknown(attrType(t, typ, name)) }
		for field := range set() {
			in.unknowns[field] = func(t testing.TB) tftypes.Value {
				attrs := set()
				if field == dynamic {
					attrs[field] = unknown(tftypes.DynamicPseudoType) // as an unknown whole expression gives it
				} else {
					attrs[field] = unknown(attrs[field].Type())
				}
				return resourceValue(t, attrType(t, typ, name), attrs)
			}
		}
		if dynamic != "" {
			in.unknowns[dynamic+" typed"] = func(t testing.TB) tftypes.Value {
				attrs := set()
				attrs[dynamic] = unknown(attrs[dynamic].Type()) // a conditional's unknown object
				return resourceValue(t, attrType(t, typ, name), attrs)
			}
			for key, v := range dynKeys {
				in.unknowns[dynamic+"."+key] = func(t testing.TB) tftypes.Value {
					attrs := set()
					keys := map[string]tftypes.Value{}
					for k, kv := range dynKeys {
						keys[k] = kv
					}
					keys[key] = unknown(v.Type())
					attrs[dynamic] = dynObj(keys)
					return resourceValue(t, attrType(t, typ, name), attrs)
				}
			}
		}
		return in
	}
	prefillArgs := map[string]tftypes.Value{"max_num_batched_tokens": num(8192), "enable_chunked_prefill": tftypes.NewValue(tftypes.Bool, true)}
	decodeArgs := map[string]tftypes.Value{"enforce_eager": tftypes.NewValue(tftypes.Bool, true)}
	extra := map[string]tftypes.Value{"num_threads": num(4)}
	overrides := objectInput{
		name:  "stage_overrides",
		known: func(testing.TB) tftypes.Value { return talkerOverride("gpu_memory_utilization", num(0.3)) },
		unknowns: map[string]func(testing.TB) tftypes.Value{
			"whole": func(testing.TB) tftypes.Value { return unknown(tftypes.DynamicPseudoType) },
			"talker": func(testing.TB) tftypes.Value {
				return talkerOverride("gpu_memory_utilization", unknown(tftypes.Number))
			},
		},
	}
	return []objectInput{
		nested("prefill", func() map[string]tftypes.Value {
			return map[string]tftypes.Value{"max_num_seqs": num(8), "gpu_memory_utilization": num(0.85), "engine_args": dynObj(prefillArgs)}
		}, "engine_args", prefillArgs),
		nested("decode", func() map[string]tftypes.Value {
			return map[string]tftypes.Value{"max_num_seqs": num(32), "engine_args": dynObj(decodeArgs)}
		}, "engine_args", decodeArgs),
		nested("connector", func() map[string]tftypes.Value {
			return map[string]tftypes.Value{"name": str("NixlConnector"), "extra_config": dynObj(extra)}
		}, "extra_config", extra),
		nested("port_range", func() map[string]tftypes.Value {
			return map[string]tftypes.Value{"first": num(30000), "last": num(30100)}
		}, "", nil),
		nested("systemd", func() map[string]tftypes.Value {
			return map[string]tftypes.Value{"unit_prefix": str("omni"), "head_wait_seconds": num(120)}
		}, "", nil),
		nested("container", func() map[string]tftypes.Value {
			words := tftypes.List{ElementType: tftypes.String}
			return map[string]tftypes.Value{"image": str("docker.io/vllm/vllm-omni:v0.24.0"), "runtime": str("podman"),
				"options": tftypes.NewValue(words, []tftypes.Value{str("--security-opt"), str("label=disable")})}
		}, "", nil),
		overrides,
	}
}

// A choice is, for each object input, null, known, or one of its unknowns.
type choice map[string]string

func (c choice) String() string {
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range c {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, k+"="+c[k])
	}
	return strings.Join(parts, " ")
}

// configs are the configuration a choice gives, and the same with every
// unknown replaced by its known value: what the configuration is at apply.
func (c choice) configs(t testing.TB, inputs []objectInput) (withUnknowns, atApply tftypes.Value) {
	u, k := seedWith(nil), seedWith(nil)
	for _, in := range inputs {
		switch v := c[in.name]; v {
		case "", "null":
		case "known":
			u[in.name], k[in.name] = in.known(t), in.known(t)
		default:
			u[in.name], k[in.name] = in.unknowns[v](t), in.known(t)
		}
	}
	return resourceValue(t, nil, u), resourceValue(t, nil, k)
}

// choices are every input alone in every state, then random combinations
// of all of them, from a fixed seed (the same configurations each run).
func choices(inputs []objectInput, random int) []choice {
	var out []choice
	for _, in := range inputs {
		out = append(out, choice{in.name: "known"})
		for u := range in.unknowns {
			out = append(out, choice{in.name: u})
		}
	}
	r := rand.New(rand.NewPCG(34, 1))
	for range random {
		c := choice{}
		for _, in := range inputs {
			states := []string{"null", "known"}
			for u := range in.unknowns {
				states = append(states, u)
			}
			slices.Sort(states)
			c[in.name] = states[r.IntN(len(states))]
		}
		out = append(out, c)
	}
	return out
}

// TestPlan_UnknownInputsByProperty: for every object input and every
// dynamic attribute inside one, unknown as a whole or in part, alone and
// in random combinations, on a create and on an update, through the
// framework's server and the direct one, the plan:
//
//   - reports no error;
//   - keeps every configured value as configured (Terraform's
//     AssertPlanValid, with an unknown's type aside: an unknown input stays
//     unknown, and a computed field is filled only where the
//     configuration leaves it null);
//   - leaves every output unknown while an input is unknown;
//   - asks Terraform to pass over the types of its unknowns exactly when an
//     input holding a dynamic attribute is unknown as a whole
//     (provider.UntypedUnknownInputs), and never otherwise;
//   - is kept by the plan made at apply, when the same inputs are known
//     (Terraform's AssertObjectCompatible): every value known at plan is
//     the value applied.
func TestPlan_UnknownInputsByProperty(t *testing.T) {
	ctx := context.Background()
	inputs := objectInputs()
	sch := resourceSchema(t)
	checkObjectInputsCovered(t, sch, inputs)
	typ := provider.PDPipelineResourceType()
	framework := provider.NewProtocol6("test")()
	if _, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	servers := map[string]tfprotov6.ProviderServer{
		"framework": framework,
		"direct":    server{&recordingServer{ProviderServer: framework, fail: true}},
	}
	// The update's prior state: the seed, planned and stored.
	_, seedState := planWithoutErrors(t, framework, resourceValue(t, nil, seedWith(nil)), tftypes.NewValue(typ, nil))
	untyped := map[string]bool{"prefill": true, "decode": true, "connector": true}
	tried := 0
	for _, c := range choices(inputs, 60) {
		withUnknowns, atApply := c.configs(t, inputs)
		wantMark := false
		for name := range untyped {
			wantMark = wantMark || c[name] == "whole"
		}
		for sname, s := range servers {
			for pname, prior := range map[string]tftypes.Value{"create": tftypes.NewValue(typ, nil), "update": seedState} {
				tried++
				t.Run(fmt.Sprintf("%s/%s/%s", c, sname, pname), func(t *testing.T) {
					resp, planned := planWithoutErrors(t, s, withUnknowns, prior)
					if got := resp.UnsafeToUseLegacyTypeSystem; got != wantMark { //nolint:staticcheck // what this test checks
						t.Errorf("UnsafeToUseLegacyTypeSystem = %v, want %v", got, wantMark)
					}
					checkPlanValid(t, sch, withUnknowns, planned)
					known := withUnknowns.IsFullyKnown()
					for _, name := range outputNames(t) {
						if v := attrOf(t, planned, name); v.IsFullyKnown() != known {
							t.Errorf("output %s: fully known %v, want %v", name, v.IsFullyKnown(), known)
						}
					}
					_, final := planWithoutErrors(t, s, atApply, prior)
					if err := compatible(planned, final); err != nil {
						t.Errorf("the plan at apply departs from the plan: %v", err)
					}
				})
			}
		}
	}
	t.Logf("%d configurations, each planned on a create and an update through both servers", tried/4)
}

// checkObjectInputsCovered: every optional object or dynamic input is
// among the inputs the test makes unknown, each dynamic attribute of one
// with a case of its own.
func checkObjectInputsCovered(t *testing.T, sch rschema.Schema, inputs []objectInput) {
	t.Helper()
	for name, a := range sch.Attributes {
		obj, isObj := a.(rschema.SingleNestedAttribute)
		_, isDyn := a.(rschema.DynamicAttribute)
		if !isObj && !isDyn || !a.IsOptional() {
			continue
		}
		i := slices.IndexFunc(inputs, func(in objectInput) bool { return in.name == name })
		if i < 0 {
			t.Errorf("the object input %s is not among objectInputs", name)
			continue
		}
		for field, fa := range obj.Attributes {
			if _, dyn := fa.(rschema.DynamicAttribute); dyn {
				if _, ok := inputs[i].unknowns[field+" typed"]; !ok {
					t.Errorf("%s.%s, a dynamic attribute, has no unknown case", name, field)
				}
			}
		}
	}
}

// planWithoutErrors plans config over prior through s; an error fails the
// test.
func planWithoutErrors(t *testing.T, s tfprotov6.ProviderServer, config, prior tftypes.Value) (*tfprotov6.PlanResourceChangeResponse, tftypes.Value) {
	t.Helper()
	resp, err := s.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: provider.PDPipelineTypeName, Config: dynamicValue(t, config),
		PriorState: dynamicValue(t, prior), ProposedNewState: dynamicValue(t, proposedNew(t, config, prior)),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			t.Fatalf("plan error: %s: %s", d.Summary, d.Detail)
		}
	}
	planned, err := resp.PlannedState.Unmarshal(provider.PDPipelineResourceType())
	if err != nil {
		t.Fatal(err)
	}
	return resp, planned
}

func attrOf(t testing.TB, v tftypes.Value, name string) tftypes.Value {
	t.Helper()
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	return attrs[name]
}

// checkPlanValid is Terraform's rule for a planned value (AssertPlanValid)
// on the inputs, with an unknown's type aside: a configured value is
// planned as configured; an unknown one stays unknown; a null one may be
// filled only if it is computed.
func checkPlanValid(t *testing.T, sch rschema.Schema, config, planned tftypes.Value) {
	t.Helper()
	for name, a := range sch.Attributes {
		if !a.IsOptional() && !a.IsRequired() {
			continue
		}
		c, p := attrOf(t, config, name), attrOf(t, planned, name)
		obj, isObj := a.(rschema.SingleNestedAttribute)
		switch {
		case !c.IsKnown():
			if p.IsKnown() {
				t.Errorf("%s: unknown in the configuration, planned as %v", name, p)
			}
		case c.IsNull():
			if !p.IsNull() && !a.IsComputed() {
				t.Errorf("%s: null in the configuration, planned as %v", name, p)
			}
		case isObj:
			if !p.IsKnown() || p.IsNull() {
				t.Errorf("%s: configured, planned as %v", name, p)
				continue
			}
			for field, fa := range obj.Attributes {
				cf, pf := attrOf(t, c, field), attrOf(t, p, field)
				switch {
				case cf.IsNull():
					if !pf.IsNull() && !fa.IsComputed() {
						t.Errorf("%s.%s: null in the configuration, planned as %v", name, field, pf)
					}
				case !sameValue(cf, pf):
					t.Errorf("%s.%s: configured as %v, planned as %v", name, field, cf, pf)
				}
			}
		case !sameValue(c, p):
			t.Errorf("%s: configured as %v, planned as %v", name, c, p)
		}
	}
}

// sameValue is Equal, with two unknowns the same whatever their types.
func sameValue(a, b tftypes.Value) bool {
	if !a.IsKnown() || !b.IsKnown() {
		return !a.IsKnown() && !b.IsKnown()
	}
	return a.Equal(b)
}

// compatible reports where final, the plan made at apply, departs from
// planned: every value known in planned must be final's.
func compatible(planned, final tftypes.Value) error {
	var problems []string
	walkErr := tftypes.Walk(planned, func(p *tftypes.AttributePath, v tftypes.Value) (bool, error) {
		if !v.IsKnown() {
			return false, nil
		}
		fv, ok := valueAt(final, p)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: known at plan, absent at apply", p))
			return false, nil
		case !fv.IsKnown():
			problems = append(problems, fmt.Sprintf("%s: known at plan, not at apply", p))
			return false, nil
		case v.IsNull() != fv.IsNull():
			problems = append(problems, fmt.Sprintf("%s: %v at plan, %v at apply", p, v, fv))
			return false, nil
		}
		t := v.Type()
		if t.Is(tftypes.Object{}) || t.Is(tftypes.List{}) || t.Is(tftypes.Map{}) || t.Is(tftypes.Set{}) || t.Is(tftypes.Tuple{}) {
			return !v.IsNull(), nil
		}
		if !v.Equal(fv) {
			problems = append(problems, fmt.Sprintf("%s: %v at plan, %v at apply", p, v, fv))
		}
		return false, nil
	})
	if walkErr != nil {
		return walkErr
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// valueAt is the value at p in v, if v has one there.
func valueAt(v tftypes.Value, p *tftypes.AttributePath) (tftypes.Value, bool) {
	got, _, err := tftypes.WalkAttributePath(v, p)
	fv, ok := got.(tftypes.Value)
	return fv, err == nil && ok
}

// TestCompatible_FindsADeparture: the property's last check sees a value
// known at plan that apply changes, and passes over one unknown at plan.
func TestCompatible_FindsADeparture(t *testing.T) {
	a := resourceValue(t, nil, seedWith(map[string]tftypes.Value{"api_port": num(8091)}))
	b := resourceValue(t, nil, seedWith(map[string]tftypes.Value{"api_port": num(8092)}))
	u := resourceValue(t, nil, seedWith(map[string]tftypes.Value{"api_port": unknown(tftypes.Number)}))
	if compatible(a, b) == nil {
		t.Error("api_port 8091 at plan and 8092 at apply pass")
	}
	if err := compatible(u, b); err != nil {
		t.Errorf("api_port unknown at plan: %v", err)
	}
}
