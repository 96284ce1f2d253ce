package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// State versions of omni_pd_pipeline.
//
//   - 0: the first release, the schema pdPipelineSchemaV0 freezes.
//   - 1: adds `pipeline`, `connector.kv_both`, `stages[*].host` and
//     `ports[*].host`.
//   - 2: adds `vllm_omni_version` (Optional + Computed), `vllm_omni_release`,
//     `systemd`, `config_sha256`, `health`, and `gpu_count` and `processes`
//     on each launch.
//   - 3: the units become one template with a drop-in per stage, and every
//     value is returned once: adds `systemd_unit`, `check_script_path` and
//     each process's `systemd_dropin`; retires the outputs that repeated
//     another (retiredOutputs).
//
//
// A schema change needs a new version only when it renames, removes or
// retypes an attribute; TestStateVersion_OnlyAdds holds the current schema
// to that against pdPipelineSchemaV3. An attribute that only appears, such
// as a new output (a row of pipelineOutputTable), needs none: Terraform
// hands the provider the stored JSON through UpgradeResourceState on every
// read of a state, of the current version too. For the current version the
// framework decodes it with the current schema (terraform-plugin-framework
// v1.19.0, internal/fwserver/server_upgraderesourcestate.go:
// RawState.UnmarshalWithOpts with IgnoreUndefinedAttributes), and tftypes'
// JSON decoder gives each attribute of an object that the JSON lacks a
// null value, at every depth (terraform-plugin-go v0.31.0,
// tftypes/value_json.go, jsonUnmarshalObject: "make sure we have a value
// for every attribute"). The next plan computes it, as an in-place update
// (TestUpgradeState_SameVersionFillsMissingAttributes,
// TestAccPDPipelineResource_AttributeAddedInSameVersion). The same decoder
// skips an attribute the JSON has and the schema lacks, which is why a
// removal or a rename needs a version: upgradePipelineState never drops a
// value silently.
//
// Adding version N+1 (see DESIGN.md, "State versions"):
//  1. Bump pdPipelineSchemaVersion.
//  2. pdPipelineSchemaVN is version N as first released: give it the
//     attributes added since (TestStateVersion_OnlyAdds lists them), so that
//     its states decode whole, and freeze the new schema's types as
//     pdPipelineSchemaV(N+1) at the end of pdPipelineStateSchemas
//     (descriptions and validators may go). UpgradeState gives every earlier
//     version an entry with its schema as PriorSchema and
//     upgradePipelineState as upgrader. Each entry upgrades straight to the
//     current schema: the framework does not chain them.
//  3. Attributes that only appear need nothing: upgradePipelineState sets
//     them null, and the next plan computes them. An attribute that is
//     renamed, removed or changes type makes upgradePipelineState fail for
//     every older version (it never drops a value silently): give those
//     entries an upgrader that moves the value first.
//  4. Record what version N+1 changed in TestUpgradeState_NewAttributes and
//     add a v N provider to the upgrade acceptance test.

// pdPipelineStateSchemas are the schemas of the resource's state versions,
// by version, each as frozen when it was released: the last is the
// current version's, which the current schema may only add to.
var pdPipelineStateSchemas = []func() schema.Schema{pdPipelineSchemaV0, pdPipelineSchemaV1, pdPipelineSchemaV2, pdPipelineSchemaV3}

// UpgradeState upgrades every earlier state version to the current schema.
func (r *pdPipelineResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	out := make(map[int64]resource.StateUpgrader, pdPipelineSchemaVersion)
	for version := range int64(pdPipelineSchemaVersion) {
		prior := pdPipelineStateSchemas[version]()
		out[version] = resource.StateUpgrader{PriorSchema: &prior, StateUpgrader: upgradePipelineState}
	}
	return out
}

// upgradePipelineState carries every attribute of an earlier state over to
// the current schema by name and sets the attributes that did not exist then
// to null. Outputs the next plan would compute differently (a stage's host
// where one is set) are corrected by that plan as an in-place update.
func upgradePipelineState(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	if req.State == nil {
		resp.Diagnostics.AddError("Unable to upgrade omni_pd_pipeline state", "no prior schema was given for this state version; this is a bug in the provider")
		return
	}
	current := resp.State.Schema.Type().TerraformType(ctx)
	v, _, err := upgradeValue(req.State.Raw, current, "")
	if err != nil {
		resp.Diagnostics.AddError("Unable to upgrade omni_pd_pipeline state",
			fmt.Sprintf("The stored state cannot be carried over to this provider version: %v. This is a bug in the provider; please report it.", err))
		return
	}
	resp.State.Raw = v
}

// retiredOutputs are the computed attributes an earlier version returned
// and the current one does not, each because another output holds its
// value (version 3): the upgrade drops them, and the next plan computes
// what replaces them. Only outputs can be here, never an input: dropping
// one loses nothing a user wrote. A process's argv, env, devices and ports
// came back after version 3, with version 2's types, as what a runner
// other than systemd needs: the current schema has them, so a version 2
// state carries them over, and the next plan computes them again.
var retiredOutputs = map[string]bool{
	"launches[*].argv":                           true, // processes[*] (the head's is serve_args)
	"launches[*].command":                        true,
	"launches[*].processes[*].argv":              true, // back after version 3
	"launches[*].processes[*].command":           true,
	"launches[*].processes[*].env":               true, // back after version 3
	"launches[*].processes[*].devices":           true, // back after version 3
	"launches[*].processes[*].ports":             true, // back after version 3
	"launches[*].processes[*].systemd_unit":      true, // systemd_unit with systemd_dropin
	"launches[*].processes[*].preflight":         true, // check_script_path, called by the units
	"launches[*].processes[*].preflight_command": true,
	"health.readiness_argv":                      true, // health.readiness_command
	"health.smoke_argv":                          true, // health.smoke_command
}

// upgradeValue rebuilds v with type to: object attributes are matched by
// name, attributes that to adds are null, and collections are rebuilt
// element by element. It returns the paths of the added attributes
// (stages[*].host for an attribute of every element). Dynamic values are
// kept as they are. An attribute that to lacks, or a primitive whose type
// changed, is an error: the caller must move that value itself.
func upgradeValue(v tftypes.Value, to tftypes.Type, at string) (tftypes.Value, []string, error) {
	if to.Is(tftypes.DynamicPseudoType) {
		return v, nil, nil
	}
	if v.IsNull() {
		return tftypes.NewValue(to, nil), nil, nil
	}
	if !v.IsKnown() {
		return tftypes.NewValue(to, tftypes.UnknownValue), nil, nil
	}
	switch t := to.(type) {
	case tftypes.Object:
		var attrs map[string]tftypes.Value
		if err := v.As(&attrs); err != nil {
			return tftypes.Value{}, nil, fmt.Errorf("%s: %w", describeAt(at), err)
		}
		out := make(map[string]tftypes.Value, len(t.AttributeTypes))
		var added []string
		for _, name := range sortedNames(attrs) {
			at := joinPath(at, name)
			nt, ok := t.AttributeTypes[name]
			if !ok && retiredOutputs[at] {
				continue
			}
			if !ok {
				return tftypes.Value{}, nil, fmt.Errorf("attribute %s has no place in the current schema", at)
			}
			nv, a, err := upgradeValue(attrs[name], nt, at)
			if err != nil {
				return tftypes.Value{}, nil, err
			}
			out[name], added = nv, append(added, a...)
		}
		for _, name := range sortedNames(t.AttributeTypes) {
			if _, ok := out[name]; !ok {
				out[name] = tftypes.NewValue(t.AttributeTypes[name], nil)
				added = append(added, joinPath(at, name))
			}
		}
		return tftypes.NewValue(t, out), added, nil
	case tftypes.List, tftypes.Set:
		elemType := elementType(t)
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return tftypes.Value{}, nil, fmt.Errorf("%s: %w", describeAt(at), err)
		}
		out := make([]tftypes.Value, len(elems))
		added := map[string]bool{}
		for i, e := range elems {
			nv, a, err := upgradeValue(e, elemType, at+"[*]")
			if err != nil {
				return tftypes.Value{}, nil, err
			}
			out[i] = nv
			for _, p := range a {
				added[p] = true
			}
		}
		return tftypes.NewValue(t, out), sortedNames(added), nil
	case tftypes.Map:
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			return tftypes.Value{}, nil, fmt.Errorf("%s: %w", describeAt(at), err)
		}
		out := make(map[string]tftypes.Value, len(elems))
		for k, e := range elems {
			nv, _, err := upgradeValue(e, t.ElementType, at+"[*]")
			if err != nil {
				return tftypes.Value{}, nil, err
			}
			out[k] = nv
		}
		return tftypes.NewValue(t, out), nil, nil
	}
	if !v.Type().Is(to) {
		return tftypes.Value{}, nil, fmt.Errorf("%s changed type from %s to %s", describeAt(at), v.Type(), to)
	}
	return v, nil, nil
}

func elementType(t tftypes.Type) tftypes.Type {
	switch t := t.(type) {
	case tftypes.List:
		return t.ElementType
	case tftypes.Set:
		return t.ElementType
	}
	return tftypes.DynamicPseudoType
}

func joinPath(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func describeAt(at string) string {
	if at == "" {
		return "the state"
	}
	return "attribute " + strings.TrimSuffix(at, "[*]")
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pdPipelineSchemaV0 is the resource schema of state version 0, frozen: the
// attributes the first release published, with their types and flags. It has
// no `pipeline`, no `connector.kv_both` and no `host` on the `stages` and
// `ports` objects. Do not edit it; a later schema change is a new version.
func pdPipelineSchemaV0() schema.Schema {
	optString := schema.StringAttribute{Optional: true}
	optNumber := schema.NumberAttribute{Optional: true}
	optDynamic := schema.DynamicAttribute{Optional: true}
	role := schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
		"devices":                schema.ListAttribute{Optional: true, ElementType: types.NumberType},
		"tensor_parallel_size":   optNumber,
		"max_num_seqs":           optNumber,
		"gpu_memory_utilization": schema.Float64Attribute{Optional: true},
		"bootstrap_port":         optNumber,
		"host":                   optString,
		"engine_args":            optDynamic,
	}}
	compString := schema.StringAttribute{Computed: true}
	compInt := schema.Int64Attribute{Computed: true}
	compInts := schema.ListAttribute{Computed: true, ElementType: types.Int64Type}
	return schema.Schema{
		Version: 0,
		Attributes: map[string]schema.Attribute{
			"model":           schema.StringAttribute{Required: true},
			"preset":          optString,
			"base_config":     optString,
			"format":          optString,
			"split_stage":     optNumber,
			"prefill":         role,
			"decode":          role,
			"stage_overrides": optDynamic,
			"gpus":            optNumber,
			"connector": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"name":         optString,
				"protocol":     optString,
				"device_name":  optString,
				"extra_config": optDynamic,
			}},
			"api_port": optNumber,
			"port_range": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"first": schema.NumberAttribute{Required: true},
				"last":  schema.NumberAttribute{Required: true},
			}},
			"reserved_ports": schema.SetAttribute{Optional: true, ElementType: types.NumberType},
			"config_path":    optString,
			"triggers": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
			},

			"id":          compString,
			"config_yaml": compString,
			"stages": schema.ListNestedAttribute{Computed: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"stage_id":             compInt,
				"role":                 compString,
				"model_stage":          compString,
				"devices":              compInts,
				"tensor_parallel_size": compInt,
				"inputs":               compInts,
				"kv_role":              compString,
				"bootstrap_port":       compInt,
			}}},
			"edges": schema.ListNestedAttribute{Computed: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"from": compInt,
				"to":   compInt,
			}}},
			"ports": schema.ListNestedAttribute{Computed: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name":     compString,
				"port":     compInt,
				"stage_id": compInt,
			}}},
			"gpu_count":     compInt,
			"serve_command": compString,
			"serve_args":    schema.ListAttribute{Computed: true, ElementType: types.StringType},
			"diagram":       compString,
			"launches": schema.ListNestedAttribute{Computed: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"host":      compString,
				"stage_ids": compInts,
				"argv":      schema.ListAttribute{Computed: true, ElementType: types.StringType},
				"command":   compString,
				"env":       schema.MapAttribute{Computed: true, ElementType: types.StringType},
				"ports":     compInts,
			}}},
		},
	}
}

// pdPipelineSchemaV1 is the resource schema of state version 1, frozen:
// version 0 with `pipeline`, `connector.kv_both`, and `host` on the `stages`,
// `ports` objects. Do not edit it; a later schema change is a new version.
func pdPipelineSchemaV1() schema.Schema {
	s := pdPipelineSchemaV0()
	s.Version = 1
	attrs := make(map[string]schema.Attribute, len(s.Attributes)+1)
	for k, v := range s.Attributes {
		attrs[k] = v
	}
	attrs["pipeline"] = schema.StringAttribute{Optional: true}
	// Version 0's schema is a literal above with these kinds; a change
	// there is a defect every test run catches here.
	connector, ok := attrs["connector"].(schema.SingleNestedAttribute)
	if !ok {
		panic("version 0's connector is not a single nested attribute")
	}
	connector.Attributes = withAttribute(connector.Attributes, "kv_both", schema.BoolAttribute{Optional: true})
	attrs["connector"] = connector
	for _, name := range []string{"stages", "ports"} {
		list, ok := attrs[name].(schema.ListNestedAttribute)
		if !ok {
			panic("version 0's " + name + " is not a list nested attribute")
		}
		list.NestedObject.Attributes = withAttribute(list.NestedObject.Attributes, "host", schema.StringAttribute{Computed: true})
		attrs[name] = list
	}
	s.Attributes = attrs
	return s
}

// pdPipelineSchemaV2 is the resource schema of state version 2, frozen:
// version 1's with the release, the systemd settings, the config's hash,
// health, and each launch's GPU count and processes, each with its full
// unit and preflight. Do not edit it.
func pdPipelineSchemaV2() schema.Schema {
	s := pdPipelineSchemaV1()
	s.Version = 2
	compString := schema.StringAttribute{Computed: true}
	compInt := schema.Int64Attribute{Computed: true}
	compStrings := schema.ListAttribute{Computed: true, ElementType: types.StringType}
	optString := schema.StringAttribute{Optional: true}
	attrs := withAttribute(s.Attributes, "vllm_omni_version", schema.StringAttribute{Optional: true, Computed: true})
	attrs["vllm_omni_release"] = compString
	attrs["config_sha256"] = compString
	attrs["systemd"] = schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
		"user": optString, "cache_dir": optString, "vllm_path": optString, "python_path": optString,
		"environment_file": optString, "unit_prefix": optString, "head_wait_seconds": schema.Int64Attribute{Optional: true},
	}}
	attrs["health"] = schema.SingleNestedAttribute{Computed: true, Attributes: map[string]schema.Attribute{
		"host": compString, "port": compInt, "liveness_url": compString, "readiness_url": compString,
		"readiness_argv": compStrings, "readiness_command": compString,
		"smoke_url": compString, "smoke_argv": compStrings, "smoke_command": compString,
	}}
	launches, ok := attrs["launches"].(schema.ListNestedAttribute)
	if !ok {
		panic("version 1's launches is not a list nested attribute")
	}
	process := schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"stage_id": compInt, "role": compString, "argv": compStrings, "command": compString,
		"env":     schema.MapAttribute{Computed: true, ElementType: types.StringType},
		"devices": schema.ListAttribute{Computed: true, ElementType: types.Int64Type},
		"ports": schema.ListNestedAttribute{Computed: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": compString, "port": compInt,
		}}},
		"unit_name": compString, "systemd_unit": compString, "preflight": compStrings, "preflight_command": compString,
	}}
	launches.NestedObject.Attributes = withAttribute(launches.NestedObject.Attributes, "gpu_count", compInt)
	launches.NestedObject.Attributes["processes"] = schema.ListNestedAttribute{Computed: true, NestedObject: process}
	attrs["launches"] = launches
	s.Attributes = attrs
	return s
}

// pdPipelineSchemaV3 is the resource schema of state version 3, frozen as
// first released: version 2's without the outputs it retired
// (retiredOutputs), with the units' template and drop-ins
// (`systemd_unit`, each process's `systemd_dropin`) and
// `check_script_path`. Do not edit it but to add what was added since, at
// the next version.
func pdPipelineSchemaV3() schema.Schema {
	s := pdPipelineSchemaV2()
	s.Version = 3
	compString := schema.StringAttribute{Computed: true}
	file := schema.SingleNestedAttribute{Computed: true, Attributes: map[string]schema.Attribute{
		"path": compString, "content": compString,
	}}
	attrs := withAttribute(s.Attributes, "systemd_unit", file)
	attrs["check_script_path"] = compString
	// Version 2's schema is built above with these kinds; a change there
	// is a defect every test run catches here.
	health, ok := attrs["health"].(schema.SingleNestedAttribute)
	if !ok {
		panic("version 2's health is not a single nested attribute")
	}
	health.Attributes = withoutAttributes(health.Attributes, "readiness_argv", "smoke_argv")
	attrs["health"] = health
	launches, ok := attrs["launches"].(schema.ListNestedAttribute)
	if !ok {
		panic("version 2's launches is not a list nested attribute")
	}
	launches.NestedObject.Attributes = withoutAttributes(launches.NestedObject.Attributes, "argv", "command")
	launches.NestedObject.Attributes["processes"] = schema.ListNestedAttribute{Computed: true, NestedObject: schema.NestedAttributeObject{
		Attributes: map[string]schema.Attribute{
			"stage_id": schema.Int64Attribute{Computed: true}, "role": compString, "unit_name": compString, "systemd_dropin": file,
		},
	}}
	attrs["launches"] = launches
	s.Attributes = attrs
	return s
}

// withoutAttributes copies attrs without the names given.
func withoutAttributes(attrs map[string]schema.Attribute, names ...string) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(attrs))
	for k, v := range attrs {
		out[k] = v
	}
	for _, name := range names {
		delete(out, name)
	}
	return out
}

// withAttribute copies attrs with one more attribute, leaving attrs as it
// was (the frozen schemas must not share edits).
func withAttribute(attrs map[string]schema.Attribute, name string, a schema.Attribute) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(attrs)+1)
	for k, v := range attrs {
		out[k] = v
	}
	out[name] = a
	return out
}
