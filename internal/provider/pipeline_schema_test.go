package provider

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

func resourceSchema(t *testing.T) schema.Schema {
	t.Helper()
	var resp resource.SchemaResponse
	NewPDPipelineResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("resource schema: %v", resp.Diagnostics)
	}
	return resp.Schema
}

func TestSchemas_ValidateImplementation(t *testing.T) {
	ctx := context.Background()
	if diags := resourceSchema(t).ValidateImplementation(ctx); diags.HasError() {
		t.Errorf("resource schema: %v", diags)
	}
	var dsResp datasource.SchemaResponse
	NewPDPipelineDataSource().Schema(ctx, datasource.SchemaRequest{}, &dsResp)
	if diags := dsResp.Schema.ValidateImplementation(ctx); diags.HasError() {
		t.Errorf("data source schema: %v", diags)
	}
}

// The data source and the resource expose the same attributes with the same
// types; the resource adds only triggers.
func TestSchemas_Parity(t *testing.T) {
	ctx := context.Background()
	rs := resourceSchema(t)
	var dsResp datasource.SchemaResponse
	NewPDPipelineDataSource().Schema(ctx, datasource.SchemaRequest{}, &dsResp)
	ds := dsResp.Schema

	if _, ok := ds.Attributes["triggers"]; ok {
		t.Error("data source must not have triggers")
	}
	if len(rs.Attributes) != len(ds.Attributes)+1 {
		t.Errorf("resource has %d attributes, data source %d; want exactly one more (triggers)", len(rs.Attributes), len(ds.Attributes))
	}
	for name, ra := range rs.Attributes {
		if name == "triggers" {
			continue
		}
		da, ok := ds.Attributes[name]
		if !ok {
			t.Errorf("data source lacks %s", name)
			continue
		}
		if !ra.GetType().Equal(da.GetType()) {
			t.Errorf("%s: resource type %s, data source type %s", name, ra.GetType(), da.GetType())
		}
		if ra.IsRequired() != da.IsRequired() || ra.IsOptional() != da.IsOptional() || ra.IsComputed() != da.IsComputed() {
			t.Errorf("%s: flags differ", name)
		}
	}
}

// Every attribute, nested ones included, is documented.
func TestSchema_Descriptions(t *testing.T) {
	var walk func(prefix string, attrs map[string]schema.Attribute)
	walk = func(prefix string, attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			if a.GetMarkdownDescription() == "" {
				t.Errorf("%s%s has no MarkdownDescription", prefix, name)
			}
			switch n := a.(type) {
			case schema.SingleNestedAttribute:
				walk(prefix+name+".", n.Attributes)
			case schema.ListNestedAttribute:
				walk(prefix+name+"[*].", n.NestedObject.Attributes)
			}
		}
	}
	walk("", resourceSchema(t).Attributes)
}

// The names the outputs are written under match the schema's computed
// attributes exactly, and the inputs are never computed.
func TestSchema_OutputNames(t *testing.T) {
	var computed []string
	for name, a := range resourceSchema(t).Attributes {
		if a.IsComputed() {
			computed = append(computed, name)
		}
	}
	written := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	attrs := map[string]any{}
	planned, diags := outputsFromResult(context.Background(), pipelineInputs{}, sampleResult())
	if diags.HasError() {
		t.Fatal(diags)
	}
	for k := range planned {
		attrs[k] = nil
	}
	declared := map[string]any{}
	for _, k := range append(slices.Clone(pipelineOutputNames), pipelineComputedInputs...) {
		declared[k] = nil
	}
	sort.Strings(computed)
	for _, got := range [][]string{written(attrs), written(declared)} {
		if len(got) != len(computed) {
			t.Fatalf("outputs %v, computed attributes %v", got, computed)
		}
		for i := range got {
			if got[i] != computed[i] {
				t.Fatalf("outputs %v, computed attributes %v", got, computed)
			}
		}
	}
}
