package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Terraform stops after validation when it finds an error, so a schema
// error (gpus = 4.5) would hide every problem only the engine finds
// (prefill and decode with different tensor_parallel_size) until the user
// fixed the first and planned again. When the schema's own checks already
// failed, validation therefore also runs the engine on the configuration
// with the failing attributes left unset, and reports its errors on the
// other attributes. A valid configuration is not planned here: it is
// planned once, at plan time, as always.

// validateWithEngine is an entity's whole validation of a configuration,
// the answer the framework's ValidateDataResourceConfig and
// ValidateResourceConfig give, in their order: the engine's errors beside
// the schema's (the entity's ValidateConfig, which the framework runs
// first), then the schema's checks, which validateConfig makes as the
// framework's SchemaValidate does (TestSchemaChecks_MatchFramework), in
// name order where the framework's come in map order.
func validateWithEngine(ctx context.Context, config tfsdk.Config, vs validationSchema) diag.Diagnostics {
	schemaDiags := validateConfig(ctx, config, vs)
	diags := engineErrorsBeside(ctx, config, schemaDiags)
	diags.Append(schemaDiags...)
	return diags
}

// engineErrorsBeside returns the engine's errors on attributes that
// schemaDiags does not already fault, or nothing when schemaDiags holds no
// error or the configuration is not wholly known yet (the plan checks it
// then).
func engineErrorsBeside(ctx context.Context, config tfsdk.Config, schemaDiags diag.Diagnostics) diag.Diagnostics {
	if !schemaDiags.HasError() || !inputsKnown(config.Raw, "triggers") {
		return nil
	}
	var faulted []path.Path
	for _, d := range schemaDiags.Errors() {
		if wp, ok := d.(diag.DiagnosticWithPath); ok {
			faulted = append(faulted, clearable(wp.Path()))
		}
	}
	if len(faulted) < len(schemaDiags.Errors()) {
		return nil // an error without a path: nothing can be left out safely
	}
	// Config has no setter, and a faulted path may lie inside an object
	// (port_range): the fields are cleared in the value itself.
	cleared, err := tftypes.Transform(config.Raw, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if fp, ok := namePath(p); ok && covered(fp, faulted) {
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	if err != nil {
		return nil
	}
	in, d := configInputs(ctx, tfsdk.Config{Schema: config.Schema, Raw: cleared})
	if d.HasError() {
		return nil
	}
	_, _, planDiags := planOutputs(ctx, in, nil)
	var out diag.Diagnostics
	for _, d := range planDiags.Errors() {
		if wp, ok := d.(diag.DiagnosticWithPath); ok && !covered(wp.Path(), faulted) {
			out.Append(d)
		}
	}
	return out
}

// configInputs reads the inputs of the entity whose schema config carries:
// validation serves both entities with one function.
func configInputs(ctx context.Context, config tfsdk.Config) (pipelineInputs, diag.Diagnostics) {
	if _, ok := config.Schema.GetAttributes()["triggers"]; ok {
		return readInputs(ctx, config.Raw, resourceValidationSchema())
	}
	return readInputs(ctx, config.Raw, dataSourceValidationSchema())
}

// clearable is the attribute to leave unset for an error at p: p itself,
// or the collection that holds it when p names an element (devices[0]), or
// the object when p names one of its required fields (port_range.last).
func clearable(p path.Path) path.Path {
	out := path.Empty()
	for _, s := range p.Steps() {
		name, ok := s.(path.PathStepAttributeName)
		if !ok {
			break
		}
		out = out.AtName(string(name))
	}
	if len(out.Steps()) > 1 && out.Steps()[0].Equal(path.PathStepAttributeName("port_range")) {
		return path.Root("port_range")
	}
	return out
}

// covered reports whether p is one of faulted or inside one.
func covered(p path.Path, faulted []path.Path) bool {
	for _, f := range faulted {
		if hasPrefix(p, f) {
			return true
		}
	}
	return false
}

func hasPrefix(p, prefix path.Path) bool {
	ps, fs := p.Steps(), prefix.Steps()
	if len(fs) == 0 || len(fs) > len(ps) {
		return false
	}
	for i := range fs {
		if !ps[i].Equal(fs[i]) {
			return false
		}
	}
	return true
}

// namePath converts a path of attribute names, the only kind clearable
// returns, to the framework's; ok is false for a path through elements.
func namePath(p *tftypes.AttributePath) (path.Path, bool) {
	out := path.Empty()
	for _, s := range p.Steps() {
		name, ok := s.(tftypes.AttributeName)
		if !ok {
			return out, false
		}
		out = out.AtName(string(name))
	}
	return out, len(out.Steps()) > 0
}

// ValidateConfig runs before the framework's own schema checks, whose
// results it cannot see, so it makes them itself (validateConfig) to decide,
// and adds only the engine's errors (the framework adds its own).
var (
	_ datasource.DataSourceWithValidateConfig = (*pdPipelineDataSource)(nil)
	_ resource.ResourceWithValidateConfig     = (*pdPipelineResource)(nil)
)

func (d *pdPipelineDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	resp.Diagnostics.Append(engineErrorsBeside(ctx, req.Config, validateConfig(ctx, req.Config, dataSourceValidationSchema()))...)
}

func (r *pdPipelineResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	resp.Diagnostics.Append(engineErrorsBeside(ctx, req.Config, validateConfig(ctx, req.Config, resourceValidationSchema()))...)
}
