package provider

import (
	"fmt"

	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// dataSourceAttributes derives the data source's attributes from the shared
// resource-typed definitions: the same names, types, flags, descriptions and
// validators. Resource-only details (plan modifiers, defaults) have no data
// source counterpart and are dropped; the shared schema uses none.
//
// It panics on an attribute kind it does not know, so adding one to the
// shared schema without teaching this function fails every test at once.
func dataSourceAttributes(in map[string]schema.Attribute) map[string]dsschema.Attribute {
	out := make(map[string]dsschema.Attribute, len(in))
	for name, a := range in {
		out[name] = dataSourceAttribute(name, a)
	}
	return out
}

func dataSourceAttribute(name string, a schema.Attribute) dsschema.Attribute {
	switch a := a.(type) {
	case schema.StringAttribute:
		return dsschema.StringAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.Int64Attribute:
		return dsschema.Int64Attribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.NumberAttribute:
		return dsschema.NumberAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.Float64Attribute:
		return dsschema.Float64Attribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.BoolAttribute:
		return dsschema.BoolAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.DynamicAttribute:
		return dsschema.DynamicAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.ListAttribute:
		return dsschema.ListAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description, ElementType: a.ElementType,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.SetAttribute:
		return dsschema.SetAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description, ElementType: a.ElementType,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.MapAttribute:
		return dsschema.MapAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description, ElementType: a.ElementType,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.SingleNestedAttribute:
		return dsschema.SingleNestedAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description,
			Attributes: dataSourceAttributes(a.Attributes),
			Required:   a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	case schema.ListNestedAttribute:
		return dsschema.ListNestedAttribute{
			MarkdownDescription: a.MarkdownDescription, Description: a.Description,
			NestedObject: dsschema.NestedAttributeObject{
				Attributes: dataSourceAttributes(a.NestedObject.Attributes),
				CustomType: a.NestedObject.CustomType,
				Validators: a.NestedObject.Validators,
			},
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
			DeprecationMessage: a.DeprecationMessage, CustomType: a.CustomType, Validators: a.Validators,
		}
	}
	panic(fmt.Sprintf("dataSourceAttribute: attribute %q has kind %T, which has no data source counterpart here", name, a))
}
