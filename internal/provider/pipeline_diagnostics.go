package provider

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// addPipelineDiagnostics reports the engine's findings through the framework,
// each at the attribute it concerns. The engine's code is appended to the
// detail: it is stable, so users and scripts can search for it.
//
// Terraform turns an attribute path into a source line only for top-level
// attributes (and blocks, which this schema has none of); for a nested path
// such as decode.tensor_parallel_size it shows the resource's first line.
// So a nested path is also spelled out at the start of the detail, the way
// the engine's Diagnostic.String does.
func addPipelineDiagnostics(diags *diag.Diagnostics, pds pipeline.Diagnostics) {
	for _, d := range pds {
		detail := d.Detail
		if len(d.Path) > 1 {
			detail = d.Path.String() + ": " + detail
		}
		if detail != "" {
			detail += " "
		}
		detail += "[" + d.Code.String() + "]"

		summary := sentenceCase(d.Summary)
		p, ok := frameworkPath(d.Path)
		switch {
		case d.Severity == pipeline.SeverityWarning && ok:
			diags.AddAttributeWarning(p, summary, detail)
		case d.Severity == pipeline.SeverityWarning:
			diags.AddWarning(summary, detail)
		case ok:
			diags.AddAttributeError(p, summary, detail)
		default:
			diags.AddError(summary, detail)
		}
	}
}

// sentenceCase capitalises a summary, as Terraform's own diagnostics are;
// the engine writes them in lower case so they read well mid-sentence too.
// A summary that opens with an identifier ("base_config is not ...",
// "gpus must be ...") keeps it as written: users type these names in lower
// case, and "Base_config" or "Gpus" names nothing.
func sentenceCase(s string) string {
	if s == "" {
		return s
	}
	first, _, _ := strings.Cut(s, " ")
	if strings.ContainsAny(first, "_.") || first == "gpus" || strings.HasPrefix(first, "vllm") {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// setAttributes are the schema's sets. Their elements have no index in
// Terraform, so a path into one stops at the set itself.
var setAttributes = map[string]bool{"reserved_ports": true}

// frameworkPath maps an engine path to a framework path. Names become
// attribute steps (also for keys inside the dynamic stage_overrides, which
// Terraform holds as an object) and indices list steps. ok is false for the
// empty path: the diagnostic then concerns the whole configuration.
func frameworkPath(p pipeline.Path) (out path.Path, ok bool) {
	if len(p) == 0 || p[0].Name == "" {
		return path.Empty(), false
	}
	out = path.Root(p[0].Name)
	inSet := setAttributes[p[0].Name]
	for _, s := range p[1:] {
		if inSet {
			break
		}
		if s.Name == "" {
			out = out.AtListIndex(s.Index)
		} else {
			out = out.AtName(s.Name)
		}
	}
	return out, true
}

// addDefect reports what only a defect in the provider can cause (outputs
// that do not fit the schema, a value that does not convert), at the
// attribute p where there is one: the user can do nothing but report it.
func addDefect(diags *diag.Diagnostics, p path.Path, detail string) {
	const summary = "Provider defect"
	detail += ". This is a defect in the provider, not in the configuration; please report it with the configuration that caused it."
	if len(p.Steps()) == 0 {
		diags.AddError(summary, detail)
		return
	}
	diags.AddAttributeError(p, summary, detail)
}
