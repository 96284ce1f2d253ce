package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// A provider as the first release shipped it: omni_pd_pipeline with the
// version 0 schema. It plans with today's engine and drops what version 0
// did not have, so the state it writes is a genuine version 0 state whose
// values today's provider would compute too.

type v0Provider struct {
	schema func() schema.Schema
	// rewrite, when set, changes the planned state's attributes after
	// today's engine made them, to stand in for what an older engine
	// planned.
	rewrite func(attrs map[string]tftypes.Value)
	// rewriteOld, when set, changes the planned state's attributes once
	// they have the old schema's types, for outputs the old schema had and
	// today's does not.
	rewriteOld func(attrs map[string]tftypes.Value)
}

func (v0Provider) Metadata(_ context.Context, _ fwprovider.MetadataRequest, resp *fwprovider.MetadataResponse) {
	resp.TypeName = "omni"
}
func (v0Provider) Schema(context.Context, fwprovider.SchemaRequest, *fwprovider.SchemaResponse) {}
func (v0Provider) Configure(context.Context, fwprovider.ConfigureRequest, *fwprovider.ConfigureResponse) {
}
func (p v0Provider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return v0Resource(p) }}
}
func (v0Provider) DataSources(context.Context) []func() datasource.DataSource { return nil }
func (v0Provider) Functions(context.Context) []func() function.Function       { return nil }

var v0Providers = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": providerserver.NewProtocol6WithError(v0Provider{schema: pdPipelineSchemaV0}),
}

// v2Providers is the same with the schema of version 2 as first released,
// before the nested inputs with defaults (prefill, decode, connector,
// port_range and their fields) and preset became Computed: the state's type
// is the same, only those flags differ.
var v2Providers = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": providerserver.NewProtocol6WithError(v0Provider{schema: pdPipelineSchemaV2WithoutNestedComputed}),
}

// presetNotComputedProviders stand in for the provider just before preset
// read back the preset planned: the schema of today but for that flag.
var presetNotComputedProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": providerserver.NewProtocol6WithError(v0Provider{schema: pdPipelineSchemaPresetNotComputed}),
}

func pdPipelineSchemaPresetNotComputed() schema.Schema {
	s := currentResourceSchema(context.Background())
	s.Attributes = maps.Clone(s.Attributes)
	preset, ok := s.Attributes["preset"].(schema.StringAttribute)
	if !ok {
		panic("preset is not a string attribute")
	}
	preset.Computed = false
	s.Attributes["preset"] = preset
	return s
}

func pdPipelineSchemaV2WithoutNestedComputed() schema.Schema {
	s := pdPipelineSchemaPresetNotComputed()
	attrs := maps.Clone(s.Attributes)
	for name, fields := range nestedComputedInputs {
		obj, ok := attrs[name].(schema.SingleNestedAttribute)
		if !ok {
			panic(name + " is not a single nested attribute")
		}
		obj.Computed = false
		obj.Attributes = maps.Clone(obj.Attributes)
		for _, f := range fields {
			switch a := obj.Attributes[f].(type) {
			case schema.ListAttribute:
				a.Computed = false
				obj.Attributes[f] = a
			case schema.NumberAttribute:
				a.Computed = false
				obj.Attributes[f] = a
			case schema.StringAttribute:
				a.Computed = false
				obj.Attributes[f] = a
			default:
				panic(fmt.Sprintf("%s.%s is a %T: teach this copy of the old schema its kind", name, f, a))
			}
		}
		attrs[name] = obj
	}
	s.Attributes = attrs
	return s
}

// v1Providers is the same with the version 1 schema.
var v1Providers = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": providerserver.NewProtocol6WithError(v0Provider{schema: pdPipelineSchemaV1}),
}

type v0Resource struct {
	schema     func() schema.Schema
	rewrite    func(attrs map[string]tftypes.Value)
	rewriteOld func(attrs map[string]tftypes.Value)
}

func (v0Resource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pd_pipeline"
}

func (r v0Resource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.schema()
}

func (r v0Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !inputsKnown(req.Config.Raw, "triggers") {
		return
	}
	current := currentResourceSchema(ctx)
	raw, err := projectValue(req.Plan.Raw, current.Type().TerraformType(ctx))
	if err != nil {
		resp.Diagnostics.AddError("v0 test provider", err.Error())
		return
	}
	config, err := projectValue(req.Config.Raw, current.Type().TerraformType(ctx))
	if err != nil {
		resp.Diagnostics.AddError("v0 test provider", err.Error())
		return
	}
	plan := tfsdk.Plan{Schema: current, Raw: raw}
	in, diags := readInputs(ctx, config, resourceValidationSchema())
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	out, ok, diags := planOutputs(ctx, in, nil)
	if resp.Diagnostics.Append(diags...); !ok {
		return
	}
	resp.Diagnostics.Append(setOutputs(ctx, &plan, out)...)
	var attrs map[string]tftypes.Value
	if err := plan.Raw.As(&attrs); err != nil {
		resp.Diagnostics.AddError("v0 test provider", err.Error())
		return
	}
	// Inputs the old schema had without Computed stay as configured.
	old := resp.Plan.Schema.GetAttributes()
	for _, name := range pipelineComputedInputs {
		if a, ok := old[name]; !ok || !a.IsComputed() {
			attrs[name] = attributeOf(raw, name)
		}
	}
	if r.rewrite != nil {
		r.rewrite(attrs)
	}
	plan.Raw = tftypes.NewValue(plan.Raw.Type(), attrs)
	if resp.Plan.Raw, err = projectValue(plan.Raw, resp.Plan.Schema.Type().TerraformType(ctx)); err != nil {
		resp.Diagnostics.AddError("v0 test provider", err.Error())
		return
	}
	if r.rewriteOld != nil {
		var old map[string]tftypes.Value
		if err := resp.Plan.Raw.As(&old); err != nil {
			resp.Diagnostics.AddError("v0 test provider", err.Error())
			return
		}
		r.rewriteOld(old)
		resp.Plan.Raw = tftypes.NewValue(resp.Plan.Raw.Type(), old)
	}
}

func (v0Resource) Create(_ context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw.Copy()
}
func (v0Resource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}
func (v0Resource) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw.Copy()
}
func (v0Resource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

func currentResourceSchema(ctx context.Context) schema.Schema {
	var resp resource.SchemaResponse
	NewPDPipelineResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	return resp.Schema
}

// projectValue rebuilds v with type to, for the test provider only: it drops
// object attributes that to lacks and sets the ones it adds to null.
func projectValue(v tftypes.Value, to tftypes.Type) (tftypes.Value, error) {
	if to.Is(tftypes.DynamicPseudoType) || !v.IsKnown() && !to.Is(tftypes.Object{}) && !to.Is(tftypes.List{}) {
		return v, nil
	}
	if v.IsNull() {
		return tftypes.NewValue(to, nil), nil
	}
	if !v.IsKnown() {
		return tftypes.NewValue(to, tftypes.UnknownValue), nil
	}
	switch t := to.(type) {
	case tftypes.Object:
		var attrs map[string]tftypes.Value
		if err := v.As(&attrs); err != nil {
			return v, err
		}
		out := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			a, ok := attrs[name]
			if !ok {
				out[name] = tftypes.NewValue(at, nil)
				continue
			}
			pv, err := projectValue(a, at)
			if err != nil {
				return v, err
			}
			out[name] = pv
		}
		return tftypes.NewValue(t, out), nil
	case tftypes.List:
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return v, err
		}
		for i, e := range elems {
			pv, err := projectValue(e, t.ElementType)
			if err != nil {
				return v, err
			}
			elems[i] = pv
		}
		return tftypes.NewValue(t, elems), nil
	}
	return v, nil
}

// A configuration that sets every attribute version 0 had, on one host.
// The test providers plan with today's engine, where MooncakeConnector
// alone fails the handoff gate, so Mooncake's settings (protocol,
// device_name) go to a MultiConnector's Mooncake child beside NIXL.
const upgradeConfig = `
resource "omni_pd_pipeline" "test" {
  model           = "` + seedModel + `"
  preset          = "qwen3_omni_moe"
  format          = "stage_args"
  split_stage     = 0
  prefill         = { devices = [0], tensor_parallel_size = 1, max_num_seqs = 8, gpu_memory_utilization = 0.85, bootstrap_port = 26001, engine_args = { enforce_eager = false } }
  decode          = { devices = [1], tensor_parallel_size = 1, max_num_seqs = 48, gpu_memory_utilization = 0.8, bootstrap_port = 26002, engine_args = { max_model_len = 32768 } }
  stage_overrides = { talker = { devices = [2], max_num_seqs = 32, gpu_memory_utilization = 0.5, engine_args = { enforce_eager = true } }, code2wav = { devices = [2], gpu_memory_utilization = 0.2 } }
  gpus            = 4
  connector       = { name = "MultiConnector", protocol = "rdma", device_name = "mlx5_0", extra_config = { transfer_timeout = 30, connectors = [{ kv_connector = "NixlConnector" }, { kv_connector = "MooncakeConnector" }] } }
  api_port        = 8100
  port_range      = { first = 27000, last = 27100 }
  reserved_ports  = [22, 27000]
  config_path     = "/etc/omni/deploy.yaml"
  triggers        = { rev = "1" }
}
`

// State written with the version 0 schema upgrades, and the current
// provider then plans one in-place update that fills in what version 2
// added (vllm_omni_version, vllm_omni_release, the launches' processes).
// The version 0 test provider plans with today's engine, so this test sees
// the schema's changes only; what planning for a release changed in the
// config and the commands is pinned by the golden files and CHANGELOG.
// Every input, port and device is carried over, and the plan after that is
// empty.
func TestAccPDPipelineResource_UpgradeFromV0(t *testing.T) {
	// Values that must come through the upgrade and the next updates as
	// they were.
	type comparer interface {
		AddStateValue(string, tfjsonpath.Path) statecheck.StateCheck
	}
	kept := map[string]comparer{}
	paths := map[string]tfjsonpath.Path{}
	for _, name := range []string{"prefill", "decode", "stage_overrides", "connector.name", "triggers", "reserved_ports", "edges"} {
		p := tfjsonpath.New(name)
		if before, after, ok := strings.Cut(name, "."); ok {
			p = tfjsonpath.New(before).AtMapKey(after)
		}
		kept[name], paths[name] = statecheck.CompareValue(compare.ValuesSame()), p
	}
	// stages and ports gained a host attribute: compare what they had.
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("stages[%d].devices", i)
		kept[name], paths[name] = statecheck.CompareValue(compare.ValuesSame()), tfjsonpath.New("stages").AtSliceIndex(i).AtMapKey("devices")
	}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("ports[%d].port", i)
		kept[name], paths[name] = statecheck.CompareValue(compare.ValuesSame()), tfjsonpath.New("ports").AtSliceIndex(i).AtMapKey("port")
	}
	add := func() []statecheck.StateCheck {
		var out []statecheck.StateCheck
		for name, c := range kept {
			out = append(out, c.AddStateValue(resAddr, paths[name]))
		}
		return out
	}
	accTest(t,
		tfresource.TestStep{
			ProtoV6ProviderFactories: v0Providers,
			Config:                   upgradeConfig,
			ConfigStateChecks: append(add(),
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages").AtSliceIndex(0).AtMapKey("bootstrap_port"), knownvalue.Int64Exact(26001)),
			),
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   upgradeConfig,
			ConfigPlanChecks: tfresource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.24.0")),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.24.0")),
				},
			},
			ConfigStateChecks: append(add(),
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("pipeline"), knownvalue.Null()),
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("connector").AtMapKey("kv_both"), knownvalue.Null()),
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages").AtSliceIndex(3).AtMapKey("host"), knownvalue.Null()),
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("ports").AtSliceIndex(0).AtMapKey("host"), knownvalue.Null()),
			),
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   upgradeConfig,
			ConfigPlanChecks: tfresource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
		tfresource.TestStep{
			// The upgraded resource goes on as usual: an update keeps
			// the ports version 0 allocated.
			ProtoV6ProviderFactories: testProviders,
			Config:                   strings.Replace(upgradeConfig, "max_num_seqs = 48", "max_num_seqs = 40", 1),
			ConfigPlanChecks: tfresource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate)},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				kept["ports[0].port"].AddStateValue(resAddr, paths["ports[0].port"]),
				kept["ports[1].port"].AddStateValue(resAddr, paths["ports[1].port"]),
				kept["ports[2].port"].AddStateValue(resAddr, paths["ports[2].port"]),
			},
		},
	)
}

// State written with version 1 upgrades too: the next plan fills in
// vllm_omni_version and vllm_omni_release in place, keeps the ports, and the
// plan after it is empty.
func TestAccPDPipelineResource_UpgradeFromV1(t *testing.T) {
	ports := statecheck.CompareValue(compare.ValuesSame())
	accTest(t,
		tfresource.TestStep{
			ProtoV6ProviderFactories: v1Providers,
			Config:                   upgradeConfig,
			ConfigStateChecks:        []statecheck.StateCheck{ports.AddStateValue(resAddr, tfjsonpath.New("ports"))},
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   upgradeConfig,
			ConfigPlanChecks: tfresource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_version"), knownvalue.StringExact("0.24.0")),
				},
			},
			ConfigStateChecks: []statecheck.StateCheck{ports.AddStateValue(resAddr, tfjsonpath.New("ports"))},
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   upgradeConfig,
			ConfigPlanChecks:         tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}

// State written before the nested inputs read back their effective values
// (prefill and the others null where unset) is carried over as it is; the
// next plan is one in-place update that fills them in, keeps every port
// and device, and the plan after it is empty.
func TestAccPDPipelineResource_UpgradeToNestedEffectiveValues(t *testing.T) {
	kept := recordAcrossSteps(compare.ValuesSame())
	config := `resource "omni_pd_pipeline" "test" {
  model = "` + seedModel + `"
  decode = { max_num_seqs = 48 }
}`
	accTest(t,
		tfresource.TestStep{
			ProtoV6ProviderFactories: v2Providers,
			Config:                   config,
			ConfigStateChecks: append([]statecheck.StateCheck{
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("prefill"), knownvalue.Null()),
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("decode").AtMapKey("devices"), knownvalue.Null()),
			}, kept()...),
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   config,
			ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("prefill").AtMapKey("devices"), knownvalue.ListExact([]knownvalue.Check{knownvalue.Int64Exact(0)})),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("decode").AtMapKey("max_num_seqs"), knownvalue.Int64Exact(48)),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("decode").AtMapKey("bootstrap_port"), knownvalue.Int64Exact(25202)),
				// The stand-in for the old provider plans with today's
				// engine, so the default connector it left unset is
				// NixlConnector on both sides of the upgrade and the id
				// stays (TestAccPDPipelineResource_UpgradeFromMooncakeDefault
				// has a state planned with the old default).
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("connector").AtMapKey("name"), knownvalue.StringExact("NixlConnector")),
			}},
			ConfigStateChecks: kept(),
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   config,
			ConfigPlanChecks:         tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}

// State written before preset read back the preset planned has it null
// where the configuration leaves it unset. The next plan is one in-place
// update that fills it in, never a replacement, with every port, device
// and the id kept (nothing a machine runs changes); the plan after it is
// empty. A preset set in the configuration was already in the state.
func TestAccPDPipelineResource_UpgradeToPresetReadBack(t *testing.T) {
	for _, tc := range []struct {
		name, config, preset string
		action               plancheck.ResourceActionType
	}{
		{"inferred", pipelineResource(), "qwen3_omni_moe", plancheck.ResourceActionUpdate},
		{"thinker only", pipelineResource(), "qwen3_omni_moe_thinker_only", plancheck.ResourceActionUpdate},
		{"set", pipelineResource(`preset = "qwen3_omni_moe"`), "qwen3_omni_moe", plancheck.ResourceActionNoop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := tc.config
			if tc.preset == "qwen3_omni_moe_thinker_only" {
				config = strings.Replace(config, seedModel, "Qwen/Qwen3-Omni-30B-A3B-Thinking", 1)
			}
			kept := recordAcrossSteps(compare.ValuesSame())
			var before knownvalue.Check = knownvalue.Null()
			if tc.action == plancheck.ResourceActionNoop {
				before = knownvalue.StringExact(tc.preset)
			}
			accTest(t,
				tfresource.TestStep{
					ProtoV6ProviderFactories: presetNotComputedProviders,
					Config:                   config,
					ConfigStateChecks: append([]statecheck.StateCheck{
						statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("preset"), before),
					}, kept()...),
				},
				tfresource.TestStep{
					ProtoV6ProviderFactories: testProviders,
					Config:                   config,
					ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(resAddr, tc.action),
						plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("preset"), knownvalue.StringExact(tc.preset)),
					}},
					ConfigStateChecks: kept(),
				},
				tfresource.TestStep{
					ProtoV6ProviderFactories: testProviders,
					Config:                   config,
					ConfigPlanChecks:         tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				},
			)
		})
	}
}

// mooncakeDefaultProviders stand in for the provider before NIXL became
// the default: the state it writes for a configuration that leaves the
// connector unset says MooncakeConnector, in connector.name and in the
// config, under another id.
var mooncakeDefaultProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": providerserver.NewProtocol6WithError(v0Provider{
		schema: func() schema.Schema { return currentResourceSchema(context.Background()) },
		rewrite: func(attrs map[string]tftypes.Value) {
			var conn map[string]tftypes.Value
			if err := attrs["connector"].As(&conn); err != nil || conn == nil {
				panic(fmt.Sprintf("connector is not planned: %v", err))
			}
			conn["name"] = tftypes.NewValue(tftypes.String, "MooncakeConnector")
			attrs["connector"] = tftypes.NewValue(attrs["connector"].Type(), conn)
			var yaml string
			if err := attrs["config_yaml"].As(&yaml); err != nil {
				panic(err)
			}
			attrs["config_yaml"] = tftypes.NewValue(tftypes.String, strings.ReplaceAll(yaml, `"NixlConnector"`, `"MooncakeConnector"`))
			attrs["id"] = tftypes.NewValue(tftypes.String, "the-id-of-a-mooncake-plan")
		},
	}),
}

// A state planned when MooncakeConnector was the default (vllm-omni's
// orchestrator fails every PD request over it) plans NixlConnector now:
// an in-place update, without an error, that keeps the ports and devices
// but changes the content id, so whatever is replace_triggered_by the id
// (the machines) is replaced. That is intended: the old plan served no PD
// request.
func TestAccPDPipelineResource_UpgradeFromMooncakeDefault(t *testing.T) {
	config := pipelineResource() + `
resource "terraform_data" "machine" {
  input = "gpu-host"
  lifecycle { replace_triggered_by = [omni_pd_pipeline.test.id] }
}
`
	kept := recordAcrossSteps(compare.ValuesDiffer())
	accTest(t,
		tfresource.TestStep{
			ProtoV6ProviderFactories: mooncakeDefaultProviders,
			Config:                   config,
			ConfigStateChecks: append([]statecheck.StateCheck{
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("connector").AtMapKey("name"), knownvalue.StringExact("MooncakeConnector")),
				statecheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`kv_connector: "MooncakeConnector"`))),
			}, kept()...),
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   config,
			ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("connector").AtMapKey("name"), knownvalue.StringExact("NixlConnector")),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_yaml"), knownvalue.StringRegexp(regexp.MustCompile(`(?s)kv_connector: "NixlConnector".*kv_connector: "NixlConnector"`))),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("vllm_omni_release"), knownvalue.StringExact("0.24.0")),
				plancheck.ExpectResourceAction("terraform_data.machine", plancheck.ResourceActionReplace),
			}},
			ConfigStateChecks: kept(),
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   config,
			ConfigPlanChecks:         tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}

// With hosts set, version 1 also reports each stage's and port's host. The
// upgraded state has them null, so the first plan fills them in: an
// in-place update of outputs only, with the same id (nothing a machine runs
// changes), never a replacement.
func TestAccPDPipelineResource_UpgradeFromV0WithHosts(t *testing.T) {
	config := pipelineResource(`prefill = { host = "10.0.0.1" }`, `decode = { host = "10.0.0.1" }`)
	id := statecheck.CompareValue(compare.ValuesSame())
	accTest(t,
		tfresource.TestStep{
			ProtoV6ProviderFactories: v0Providers,
			Config:                   config,
			ConfigStateChecks:        []statecheck.StateCheck{id.AddStateValue(resAddr, tfjsonpath.New("id"))},
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   config,
			ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("stages").AtSliceIndex(0).AtMapKey("host"), knownvalue.StringExact("10.0.0.1")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{id.AddStateValue(resAddr, tfjsonpath.New("id"))},
		},
		tfresource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			Config:                   config,
			ConfigPlanChecks:         tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}

// The upgrader itself, through the provider's protocol server with a raw
// version 0 state as Terraform stores it (dynamic values carry their type).
func TestUpgradeState_V0RawState(t *testing.T) {
	ctx := context.Background()
	raw := map[string]any{
		"model": seedModel, "preset": "qwen3_omni_moe", "base_config": nil, "format": "stage_args",
		"split_stage": 0, "gpus": 4, "api_port": 8100, "config_path": "/etc/omni/deploy.yaml",
		"reserved_ports": []any{22}, "port_range": map[string]any{"first": 27000, "last": 27100},
		"triggers": map[string]any{"rev": "1"},
		"prefill": map[string]any{
			"devices": []any{0}, "tensor_parallel_size": 1, "max_num_seqs": 8, "gpu_memory_utilization": 0.85,
			"bootstrap_port": 26001, "host": nil,
			"engine_args": map[string]any{"value": map[string]any{"enforce_eager": false}, "type": []any{"object", map[string]any{"enforce_eager": "bool"}}},
		},
		"decode": nil,
		"stage_overrides": map[string]any{
			"value": map[string]any{"talker": map[string]any{"max_num_seqs": 32}},
			"type":  []any{"object", map[string]any{"talker": []any{"object", map[string]any{"max_num_seqs": "number"}}}},
		},
		"connector": map[string]any{"name": "MooncakeConnector", "protocol": "tcp", "device_name": nil, "extra_config": nil},
		"id":        "abc", "config_yaml": "stage_args: []\n", "gpu_count": 3, "serve_command": "vllm serve x", "diagram": "flowchart LR",
		"serve_args": []any{"vllm", "serve", "x"},
		"stages": []any{map[string]any{
			"stage_id": 0, "role": "prefill", "model_stage": "thinker", "devices": []any{0}, "tensor_parallel_size": 1,
			"inputs": []any{}, "kv_role": "kv_producer", "bootstrap_port": 26001,
		}},
		"edges": []any{map[string]any{"from": 0, "to": 1}},
		"ports": []any{map[string]any{"name": "api", "port": 8100, "stage_id": nil}},
		"launches": []any{map[string]any{
			"host": nil, "stage_ids": []any{0}, "argv": []any{"vllm"}, "command": "vllm", "env": map[string]any{}, "ports": []any{8100},
		}},
	}
	rawJSON, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	state := upgradeRawState(t, 0, rawJSON)
	m, diags := readInputs(ctx, state.Raw, resourceValidationSchema())
	if diags.HasError() {
		t.Fatal(diags)
	}

	// Every prior value is carried over...
	checks := map[string]bool{
		"model":            m.Model.ValueString() == seedModel,
		"preset":           m.Preset.ValueString() == "qwen3_omni_moe",
		"base_config null": m.BaseConfig.IsNull(),
		"split_stage":      intPtr(m.SplitStage) != nil && *intPtr(m.SplitStage) == 0,
		"gpus":             intPtr(m.GPUs) != nil && *intPtr(m.GPUs) == 4,
		"api_port":         intPtr(m.APIPort) != nil && *intPtr(m.APIPort) == 8100,
		"config_path":      m.ConfigPath.ValueString() == "/etc/omni/deploy.yaml",
		"triggers":         valueAt[map[string]string](t, state, "triggers")["rev"] == "1",
		"decode null":      m.Decode.IsNull(),
		"id":               valueAt[string](t, state, "id") == "abc",
		"gpu_count":        valueAt[int64](t, state, "gpu_count") == 3,
		"serve_args":       len(valueAt[[]string](t, state, "serve_args")) == 3,
		"edges":            len(valueAt[types.List](t, state, "edges").Elements()) == 1,
		"connector.name":   m.Connector.Attributes()["name"].String() == `"MooncakeConnector"`,
		"prefill.devices":  m.Prefill.Attributes()["devices"].String() == "[0]",
		"stage_overrides":  strings.Contains(m.StageOverrides.String(), `"max_num_seqs":32`),
		"prefill.engine_args": strings.Contains(m.Prefill.Attributes()["engine_args"].String(),
			`"enforce_eager":false`),
	}
	// ...and the attributes version 1 added are null.
	checks["pipeline null"] = m.Pipeline.IsNull()
	checks["connector.kv_both null"] = m.Connector.Attributes()["kv_both"].IsNull()
	oneStage, onePort := len(valueAt[types.List](t, state, "stages").Elements()) == 1, len(valueAt[types.List](t, state, "ports").Elements()) == 1
	checks["stages[0] kept"] = oneStage && valueAt[string](t, state, "stages.0.kv_role") == "kv_producer" &&
		valueAt[int64](t, state, "stages.0.bootstrap_port") == 26001
	checks["stages[0].host null"] = oneStage && valueAt[types.String](t, state, "stages.0.host").IsNull()
	checks["ports[0] kept"] = onePort && valueAt[int64](t, state, "ports.0.port") == 8100 && valueAt[types.Int64](t, state, "ports.0.stage_id").IsNull()
	checks["ports[0].host null"] = onePort && valueAt[types.String](t, state, "ports.0.host").IsNull()
	for name, ok := range checks {
		if !ok {
			t.Errorf("upgraded state: %s is wrong", name)
		}
	}
}

// gainedUpToV3 is what a state of each version gains on the way to version
// 3 as released, which the upgrade sets null: exactly what the versions
// after it added.
var gainedUpToV3 = map[int64][]string{
	0: {"check_script_path", "config_sha256", "connector.kv_both", "health", "launches[*].gpu_count", "launches[*].processes", "pipeline", "ports[*].host", "stages[*].host", "systemd", "systemd_unit", "vllm_omni_release", "vllm_omni_version"},
	1: {"check_script_path", "config_sha256", "health", "launches[*].gpu_count", "launches[*].processes", "systemd", "systemd_unit", "vllm_omni_release", "vllm_omni_version"},
	2: {"check_script_path", "launches[*].processes[*].systemd_dropin", "systemd_unit"},
	3: nil,
}

// Each frozen schema is the one its version was released with: a state of
// each version gains on the way to version 3 what the later versions
// added (gainedUpToV3), and on the way to the current schema that and what
// was added since version 3 (where what it lacks does not hold it
// already). A state version whose frozen schema is wrong fails here.
func TestUpgradeState_NewAttributes(t *testing.T) {
	ctx := context.Background()
	v3 := pdPipelineSchemaV3().Type().TerraformType(ctx)
	current := currentResourceSchema(ctx).Type().TerraformType(ctx)
	_, sinceV3, err := upgradeValue(fullValue(v3), current, "")
	if err != nil {
		t.Fatal(err)
	}
	for version, want := range gainedUpToV3 {
		// A state with every attribute and one element in each list, so
		// that the nested additions show.
		full := fullValue(pdPipelineStateSchemas[version]().Type().TerraformType(ctx))
		if _, added, err := upgradeValue(full, v3, ""); err != nil || !reflect.DeepEqual(sorted(added), sorted(want)) {
			t.Errorf("a version %d state gains %q (%v) on the way to version 3; the versions after it added %q", version, added, err, want)
		}
		wantNow := slices.Clone(want)
		for _, p := range sinceV3 {
			// A process's argv, env, devices and ports, which version 3
			// retired and the runners' data brought back with version 2's
			// types, a version 2 state holds already.
			if !slices.ContainsFunc(want, func(q string) bool { return withinPath(p, q) }) && !typeHolds(full.Type(), p) {
				wantNow = append(wantNow, p)
			}
		}
		if _, added, err := upgradeValue(full, current, ""); err != nil || !reflect.DeepEqual(sorted(added), sorted(wantNow)) {
			t.Errorf("a version %d state gains %q (%v) on the way to the current schema, want %q", version, added, err, wantNow)
		}
	}
	if pdPipelineSchemaVersion != 3 {
		t.Errorf("pdPipelineSchemaVersion = %d: record what the new version added here", pdPipelineSchemaVersion)
	}
}

// The current schema only adds to the one its state version was released
// with: every attribute of that is still there, with its type. Renaming,
// removing or retyping one needs a new state version
// (resource_pd_pipeline_upgrade.go says how); an attribute that only
// appears needs none, since a state without it reads it as null
// (TestUpgradeState_SameVersionFillsMissingAttributes).
func TestStateVersion_OnlyAdds(t *testing.T) {
	ctx := context.Background()
	if len(pdPipelineStateSchemas) != pdPipelineSchemaVersion+1 {
		t.Fatalf("pdPipelineStateSchemas holds %d schemas for versions 0 to %d: freeze each version's", len(pdPipelineStateSchemas), pdPipelineSchemaVersion)
	}
	for version, frozen := range pdPipelineStateSchemas {
		if got := frozen().Version; got != int64(version) {
			t.Errorf("pdPipelineStateSchemas[%d] is the schema of version %d", version, got)
		}
	}
	released := pdPipelineStateSchemas[pdPipelineSchemaVersion]().Type().TerraformType(ctx)
	current := currentResourceSchema(ctx).Type().TerraformType(ctx)
	if changes := schemaChanges(released, current, ""); len(changes) > 0 {
		t.Errorf("the schema changes what a state of version %d holds: %s. Renaming, removing or retyping an attribute "+
			"needs a new state version (resource_pd_pipeline_upgrade.go says how)", pdPipelineSchemaVersion, strings.Join(changes, "; "))
	}
	if _, added, err := upgradeValue(fullValue(released), current, ""); err == nil && len(added) > 0 {
		t.Logf("added since version %d was released, read as null from its states: %q", pdPipelineSchemaVersion, added)
	}
}

// schemaChanges lists where the type to differs from the type from other
// than by an attribute added to an object: an attribute from has that to
// lacks, or a type that changed.
func schemaChanges(from, to tftypes.Type, at string) []string {
	switch f := from.(type) {
	case tftypes.Object:
		t, ok := to.(tftypes.Object)
		if !ok {
			break
		}
		var out []string
		for _, name := range sortedNames(f.AttributeTypes) {
			nt, ok := t.AttributeTypes[name]
			if !ok {
				out = append(out, joinPath(at, name)+" is gone")
				continue
			}
			out = append(out, schemaChanges(f.AttributeTypes[name], nt, joinPath(at, name))...)
		}
		return out
	case tftypes.List:
		if t, ok := to.(tftypes.List); ok {
			return schemaChanges(f.ElementType, t.ElementType, at+"[*]")
		}
	case tftypes.Set:
		if t, ok := to.(tftypes.Set); ok {
			return schemaChanges(f.ElementType, t.ElementType, at+"[*]")
		}
	case tftypes.Map:
		if t, ok := to.(tftypes.Map); ok {
			return schemaChanges(f.ElementType, t.ElementType, at+"[*]")
		}
	default:
		if from.Equal(to) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s changed type from %s to %s", describeAt(at), from, to)}
}

// withinPath reports whether the attribute path p is q or lies inside it.
// typeHolds says whether t has the attribute at path, written as
// upgradeValue writes the paths it adds (launches[*].processes[*].argv).
func typeHolds(t tftypes.Type, path string) bool {
	for _, name := range strings.Split(path, ".") {
		name, each := strings.CutSuffix(name, "[*]")
		o, ok := t.(tftypes.Object)
		if !ok {
			return false
		}
		if t, ok = o.AttributeTypes[name]; !ok {
			return false
		}
		if each {
			t = elementType(t)
		}
	}
	return true
}

func withinPath(p, q string) bool {
	return p == q || strings.HasPrefix(p, q+".") || strings.HasPrefix(p, q+"[*]")
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return out
}

// A state of the current version written before an attribute existed has
// no entry for it, and reads it as null: every output and every attribute
// inside one, left out of a stored state of the current version in turn,
// comes back null through the provider's own UpgradeResourceState, which
// Terraform calls on every read of a state.
func TestUpgradeState_SameVersionFillsMissingAttributes(t *testing.T) {
	ctx := context.Background()
	current := currentResourceSchema(ctx)
	full := fullValue(current.Type().TerraformType(ctx))
	for _, attribute := range nestedAttributePaths("", pipelineOutputAttributes()) {
		t.Run(attribute.dotted, func(t *testing.T) {
			stored := stateJSON(full, full.Type())
			removeAt(stored, attribute.steps)
			rawJSON, err := json.Marshal(stored)
			if err != nil {
				t.Fatal(err)
			}
			state := upgradeRawState(t, pdPipelineSchemaVersion, rawJSON)
			if v := valueAt[attr.Value](t, state, attribute.dotted); !v.IsNull() {
				t.Errorf("%s = %s, want null", attribute.dotted, v)
			}
			if valueAt[string](t, state, "model") != "s" {
				t.Error("the other attributes are not read")
			}
		})
	}
}

// attributePath is an attribute of a schema, with every list of objects
// on the way to it: steps for removeAt, each element's attributes taken
// by a name; dotted for valueAt, with its first element.
type attributePath struct {
	steps  []string
	dotted string
}

// nestedAttributePaths are the paths of attrs and of every attribute of
// their objects, under prefix.
func nestedAttributePaths(prefix string, attrs map[string]schema.Attribute) []attributePath {
	var out []attributePath
	for _, name := range sortedNames(attrs) {
		dotted := strings.TrimPrefix(prefix+"."+name, ".")
		out = append(out, attributePath{steps: strings.Split(strings.ReplaceAll(dotted, ".0", ""), "."), dotted: dotted})
		switch a := attrs[name].(type) {
		case schema.SingleNestedAttribute:
			out = append(out, nestedAttributePaths(dotted, a.Attributes)...)
		case schema.ListNestedAttribute:
			out = append(out, nestedAttributePaths(dotted+".0", a.NestedObject.Attributes)...)
		}
	}
	return out
}

// stateJSON is v as Terraform stores it in a state's JSON, declared of
// type declared: a dynamic value carries its type beside it (fullValue
// gives each a string).
func stateJSON(v tftypes.Value, declared tftypes.Type) any {
	if declared.Is(tftypes.DynamicPseudoType) {
		if !v.Type().Is(tftypes.String) {
			panic("stateJSON writes the type of a dynamic string only, not " + v.Type().String())
		}
		return map[string]any{"value": stateJSON(v, v.Type()), "type": "string"}
	}
	if v.IsNull() {
		return nil
	}
	var elems []tftypes.Value
	var attrs map[string]tftypes.Value
	var number big.Float
	switch t := declared.(type) {
	case tftypes.Object:
		_ = v.As(&attrs)
		out := map[string]any{}
		for name, a := range attrs {
			out[name] = stateJSON(a, t.AttributeTypes[name])
		}
		return out
	case tftypes.Map:
		_ = v.As(&attrs)
		out := map[string]any{}
		for k, e := range attrs {
			out[k] = stateJSON(e, t.ElementType)
		}
		return out
	case tftypes.List, tftypes.Set:
		_ = v.As(&elems)
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = stateJSON(e, elementType(t))
		}
		return out
	}
	if v.Type().Is(tftypes.Number) {
		_ = v.As(&number)
		return json.Number(number.Text('g', -1))
	}
	var out any
	if v.Type().Is(tftypes.String) {
		var s string
		_ = v.As(&s)
		out = s
	} else {
		var b bool
		_ = v.As(&b)
		out = b
	}
	return out
}

// removeAt deletes the attribute at steps from a stateJSON value, from
// every element of the lists on the way.
func removeAt(v any, steps []string) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			removeAt(e, steps)
		}
	case map[string]any:
		if len(steps) == 1 {
			delete(v, steps[0])
			return
		}
		removeAt(v[steps[0]], steps[1:])
	}
}

// An attribute that has no place in the current schema is an error, never
// dropped.
func TestUpgradeState_UnknownAttributeFails(t *testing.T) {
	old := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"model": tftypes.String, "renamed": tftypes.String}}
	to := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"model": tftypes.String}}
	v := tftypes.NewValue(old, map[string]tftypes.Value{
		"model": tftypes.NewValue(tftypes.String, "m"), "renamed": tftypes.NewValue(tftypes.String, "x"),
	})
	if _, _, err := upgradeValue(v, to, ""); err == nil || !regexp.MustCompile(`attribute renamed has no place`).MatchString(err.Error()) {
		t.Errorf("err = %v", err)
	}
	num := tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"model": tftypes.Number}},
		map[string]tftypes.Value{"model": tftypes.NewValue(tftypes.Number, 1)})
	if _, _, err := upgradeValue(num, to, ""); err == nil || !regexp.MustCompile(`attribute model changed type`).MatchString(err.Error()) {
		t.Errorf("err = %v", err)
	}
}

// fullValue builds a known value of type t with every attribute set and one
// element in every collection.
func fullValue(t tftypes.Type) tftypes.Value {
	switch t := t.(type) {
	case tftypes.Object:
		attrs := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			attrs[name] = fullValue(at)
		}
		return tftypes.NewValue(t, attrs)
	case tftypes.List:
		return tftypes.NewValue(t, []tftypes.Value{fullValue(t.ElementType)})
	case tftypes.Set:
		return tftypes.NewValue(t, []tftypes.Value{fullValue(t.ElementType)})
	case tftypes.Map:
		return tftypes.NewValue(t, map[string]tftypes.Value{"k": fullValue(t.ElementType)})
	}
	switch {
	case t.Is(tftypes.String):
		return tftypes.NewValue(t, "s")
	case t.Is(tftypes.Number):
		return tftypes.NewValue(t, 1)
	case t.Is(tftypes.Bool):
		return tftypes.NewValue(t, true)
	}
	return tftypes.NewValue(tftypes.String, "dynamic")
}

// recordAcrossSteps returns a function whose checks, put in several steps,
// record each step's ports, stages and id, and want the ports and stages
// the same in every step and the id compared by idCompare (the same, or
// different where the upgrade must replace the machines once).
func recordAcrossSteps(idCompare compare.ValueComparer) func() []statecheck.StateCheck {
	ports := statecheck.CompareValue(compare.ValuesSame())
	stages := statecheck.CompareValue(compare.ValuesSame())
	id := statecheck.CompareValue(idCompare)
	return func() []statecheck.StateCheck {
		return []statecheck.StateCheck{
			ports.AddStateValue(resAddr, tfjsonpath.New("ports")),
			stages.AddStateValue(resAddr, tfjsonpath.New("stages")),
			id.AddStateValue(resAddr, tfjsonpath.New("id")),
		}
	}
}

// A version 2 state as the provider wrote it for the recipe's default
// pipeline (its long strings cut: testdata/upgrade/v2_seed.json), with a
// unit and a preflight per process. It upgrades: every input and
// allocation is carried over, the outputs version 3 retired are dropped
// (retiredOutputs), and the ones it added are null until the next plan.
func TestUpgradeState_V2RawState(t *testing.T) {
	ctx := context.Background()
	rawJSON, err := os.ReadFile(filepath.Join("testdata", "upgrade", "v2_seed.json"))
	if err != nil {
		t.Fatal(err)
	}
	state := upgradeRawState(t, 2, rawJSON)
	count := func(dotted string) int { return len(valueAt[types.List](t, state, dotted).Elements()) }
	fourProcesses := count("launches") == 1 && count("launches.0.processes") == 4
	checks := map[string]bool{
		"model":             valueAt[string](t, state, "model") == seedModel,
		"vllm_omni_version": valueAt[string](t, state, "vllm_omni_version") == "0.24.0",
		"id":                valueAt[string](t, state, "id") == "2bcb75bb4c22acb8de904c3c48c7b8b7b9dafa4638694ea0c2e286ec60bcafc3",
		"stages":            count("stages") == 4 && valueAt[int64](t, state, "stages.1.bootstrap_port") == 25202,
		"ports": count("ports") == 4 && valueAt[string](t, state, "ports.3.name") == "omni_master" &&
			valueAt[int64](t, state, "ports.3.port") == 25203,
		"processes":              fourProcesses && valueAt[string](t, state, "launches.0.processes.1.unit_name") == "vllm-omni-stage-1.service",
		"systemd_dropin null":    fourProcesses && valueAt[types.Object](t, state, "launches.0.processes.1.systemd_dropin").IsNull(),
		"systemd_unit null":      valueAt[types.Object](t, state, "systemd_unit").IsNull(),
		"check_script_path null": valueAt[types.String](t, state, "check_script_path").IsNull(),
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("upgraded state: %s is wrong", name)
		}
	}
	prior, diags := readPriorOutputs(ctx, state)
	if diags.HasError() {
		t.Fatal(diags)
	}
	prev, diags := previousAllocations(ctx, prior)
	if diags.HasError() || prev == nil || prev.Ports[pipeline.HostKey{Name: "omni_master"}] != 25203 {
		t.Errorf("allocations from the upgraded state: %+v, %v", prev, diags)
	}
}

// v2RealProviders stand in for the release that wrote version 2: its
// frozen schema, planned by today's engine, with the outputs version 3
// retired filled in as that release wrote them (a unit with the preflight
// inline, per process).
var v2RealProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": providerserver.NewProtocol6WithError(v0Provider{schema: pdPipelineSchemaV2, rewriteOld: fillRetiredOutputs}),
}

// fillRetiredOutputs gives the launches' retired attributes values of their
// type, as a version 2 plan had them.
func fillRetiredOutputs(attrs map[string]tftypes.Value) {
	launchesType, ok := attrs["launches"].Type().(tftypes.List)
	if !ok {
		panic("launches is not a list")
	}
	launchType := mustType[tftypes.Object](launchesType.ElementType)
	processesType := mustType[tftypes.List](launchType.AttributeTypes["processes"])
	processType := mustType[tftypes.Object](processesType.ElementType)
	strs := tftypes.List{ElementType: tftypes.String}
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	var launches []tftypes.Value
	if err := attrs["launches"].As(&launches); err != nil {
		panic(err)
	}
	for i, l := range launches {
		var la map[string]tftypes.Value
		if err := l.As(&la); err != nil {
			panic(err)
		}
		var procs []tftypes.Value
		if err := la["processes"].As(&procs); err != nil {
			panic(err)
		}
		for j, p := range procs {
			var pa map[string]tftypes.Value
			if err := p.As(&pa); err != nil {
				panic(err)
			}
			argv := tftypes.NewValue(strs, []tftypes.Value{str("vllm"), str("serve"), str(seedModel)})
			pa["argv"], pa["command"] = argv, str("vllm serve "+seedModel)
			pa["env"] = tftypes.NewValue(processType.AttributeTypes["env"], map[string]tftypes.Value{})
			pa["devices"] = tftypes.NewValue(processType.AttributeTypes["devices"], []tftypes.Value{tftypes.NewValue(tftypes.Number, j)})
			pa["ports"] = tftypes.NewValue(processType.AttributeTypes["ports"], []tftypes.Value{})
			pa["systemd_unit"] = str("[Service]\nExecStart=/usr/bin/env python3 -c 'exec(...)'\n")
			pa["preflight"] = tftypes.NewValue(strs, []tftypes.Value{str("python3"), str("-c"), str("exec(...)")})
			pa["preflight_command"] = str("python3 -c 'exec(...)'")
			procs[j] = tftypes.NewValue(processType, pa)
		}
		la["processes"] = tftypes.NewValue(processesType, procs)
		launches[i] = tftypes.NewValue(launchType, la)
	}
	attrs["launches"] = tftypes.NewValue(launchesType, launches)
	health := attrs["health"]
	var ha map[string]tftypes.Value
	if err := health.As(&ha); err != nil {
		panic(err)
	}
	ha["readiness_argv"] = tftypes.NewValue(strs, []tftypes.Value{str("python3")})
	ha["smoke_argv"] = tftypes.NewValue(strs, []tftypes.Value{str("python3")})
	attrs["health"] = tftypes.NewValue(health.Type(), ha)
}

// State written with version 2, each process's unit holding its preflight
// inline, upgrades to the template and drop-ins in place: the resource is
// updated, never replaced, every port and device is kept, the retired
// outputs are gone, and the plan after it is empty. The stand-in plans
// with today's engine, so its id is today's; a real version 2 state's id
// covered the old units, and the upgrade's plan changes it once, as it
// must (TestPlanContentID): every unit file the machines hold changes.
func TestAccPDPipelineResource_UpgradeFromV2(t *testing.T) {
	kept := recordAcrossSteps(compare.ValuesSame())
	proc := tfjsonpath.New("launches").AtSliceIndex(0).AtMapKey("processes").AtSliceIndex(1)
	tfresource.UnitTest(t, tfresource.TestCase{
		Steps: []tfresource.TestStep{
			{
				ProtoV6ProviderFactories: v2RealProviders,
				Config:                   upgradeConfig,
				ConfigStateChecks: append([]statecheck.StateCheck{
					statecheck.ExpectKnownValue(resAddr, proc.AtMapKey("preflight_command"), knownvalue.StringExact("python3 -c 'exec(...)'")),
				}, kept()...),
			},
			{
				ProtoV6ProviderFactories: testProviders,
				Config:                   upgradeConfig,
				ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("systemd_unit").AtMapKey("path"), knownvalue.StringExact("/etc/systemd/system/vllm-omni-stage@.service")),
					plancheck.ExpectKnownValue(resAddr, proc.AtMapKey("systemd_dropin").AtMapKey("path"), knownvalue.StringExact("/etc/systemd/system/vllm-omni-stage@1.service.d/plan.conf")),
				}},
				ConfigStateChecks: kept(),
			},
			{
				ProtoV6ProviderFactories: testProviders,
				Config:                   upgradeConfig,
				ConfigPlanChecks:         tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// olderSameVersionProviders stand in for a provider of the current state
// version built before two attributes were added, a top-level output and
// one inside another: the current schema, same version, without
// `config_sha256` and `health.smoke_url`.
var olderSameVersionProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": providerserver.NewProtocol6WithError(v0Provider{schema: func() schema.Schema {
		s := currentResourceSchema(context.Background())
		attrs := withoutAttributes(s.Attributes, "config_sha256")
		health, ok := attrs["health"].(schema.SingleNestedAttribute)
		if !ok {
			panic("health is not a single nested attribute")
		}
		health.Attributes = withoutAttributes(health.Attributes, "smoke_url")
		attrs["health"] = health
		s.Attributes = attrs
		return s
	}}),
}

// A state written before an attribute was added, with the same state
// version, is read with it null: Terraform and the current provider plan
// an in-place update that fills it in and keeps every port and device, and
// the plan after it is empty. No state version is needed for an addition.
func TestAccPDPipelineResource_AttributeAddedInSameVersion(t *testing.T) {
	kept := recordAcrossSteps(compare.ValuesSame())
	tfresource.UnitTest(t, tfresource.TestCase{
		Steps: []tfresource.TestStep{
			{ProtoV6ProviderFactories: olderSameVersionProviders, Config: upgradeConfig, ConfigStateChecks: kept()},
			{
				ProtoV6ProviderFactories: testProviders,
				Config:                   upgradeConfig,
				ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(resAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("config_sha256"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{64}$`))),
					plancheck.ExpectKnownValue(resAddr, tfjsonpath.New("health").AtMapKey("smoke_url"), knownvalue.StringExact("http://127.0.0.1:8100/v1/chat/completions")),
				}},
				ConfigStateChecks: kept(),
			},
			{
				ProtoV6ProviderFactories: testProviders,
				Config:                   upgradeConfig,
				ConfigPlanChecks:         tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// upgradeRawState upgrades a stored state of a version through the
// provider's own server, as Terraform asks for it; a diagnostic fails the
// test.
func upgradeRawState(t *testing.T, version int64, rawJSON []byte) tfsdk.State {
	t.Helper()
	ctx := context.Background()
	server := providerserver.NewProtocol6(New("test")())()
	resp, err := server.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "omni_pd_pipeline", Version: version, RawState: &tfprotov6.RawState{JSON: rawJSON},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Fatalf("diagnostic: %s: %s", d.Summary, d.Detail)
	}
	current := currentResourceSchema(ctx)
	v, err := resp.UpgradedState.Unmarshal(current.Type().TerraformType(ctx))
	if err != nil {
		t.Fatal(err)
	}
	return tfsdk.State{Schema: current, Raw: v}
}
