package pipeline

import (
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"strings"
	"testing"
)

func TestDiagnosticFormatting(t *testing.T) {
	p := AttrPath("stage_overrides", "talker").Attr("devices").Index(2)
	if got := p.String(); got != "stage_overrides.talker.devices[2]" {
		t.Errorf("Path.String() = %q", got)
	}
	// Attr and Index never write into a shared backing array: two paths
	// extended from one prefix stay distinct.
	base := AttrPath("a", "b")
	x, y := base.Attr("x"), base.Attr("y")
	if x.String() != "a.b.x" || y.String() != "a.b.y" {
		t.Errorf("paths alias each other: %s, %s", x, y)
	}
	d := Diagnostic{Severity: SeverityWarning, Code: diagcode.TPMismatch, Path: AttrPath("gpus"), Summary: "s", Detail: "d"}
	if got := d.String(); got != "warning: gpus: s: d [tp_mismatch]" {
		t.Errorf("String() = %q", got)
	}
	ds := Diagnostics{{Severity: SeverityWarning, Code: diagcode.GPUMemoryTight}, {Severity: SeverityError, Code: diagcode.TPMismatch}}
	if !ds.HasErrors() || len(ds.Errors()) != 1 || len(ds.Warnings()) != 1 || strings.Join(ds.Codes(), ",") != "gpu_memory_tight,tp_mismatch" {
		t.Errorf("Diagnostics helpers: %v", ds)
	}
	if (Diagnostics{{Severity: SeverityWarning}}).HasErrors() {
		t.Error("a warning is not an error")
	}
	if (Path{}).String() != "" || (Path{{Index: 0}}).String() != "[0]" {
		t.Error("empty and index-only paths")
	}
}
