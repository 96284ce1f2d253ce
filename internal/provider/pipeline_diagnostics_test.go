package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

func TestFrameworkPath(t *testing.T) {
	cases := []struct {
		in     pipeline.Path
		want   path.Path
		wantOK bool
	}{
		{nil, path.Empty(), false},
		{pipeline.AttrPath("gpus"), path.Root("gpus"), true},
		{pipeline.AttrPath("prefill", "devices").Index(1), path.Root("prefill").AtName("devices").AtListIndex(1), true},
		{pipeline.AttrPath("stage_overrides", "talker", "engine_args", "max_num_seqs"),
			path.Root("stage_overrides").AtName("talker").AtName("engine_args").AtName("max_num_seqs"), true},
		// A set element has no index in Terraform: stop at the set.
		{pipeline.AttrPath("reserved_ports").Index(2), path.Root("reserved_ports"), true},
	}
	for _, c := range cases {
		got, ok := frameworkPath(c.in)
		if ok != c.wantOK || !got.Equal(c.want) {
			t.Errorf("frameworkPath(%s) = %s, %v; want %s, %v", c.in, got, ok, c.want, c.wantOK)
		}
	}
}

func TestAddPipelineDiagnostics(t *testing.T) {
	var diags diag.Diagnostics
	addPipelineDiagnostics(&diags, pipeline.Diagnostics{
		{Severity: pipeline.SeverityError, Code: diagcode.TPMismatch, Path: pipeline.AttrPath("decode", "tensor_parallel_size"),
			Summary: "Tensor parallel sizes differ", Detail: "NixlConnector needs the same size."},
		{Severity: pipeline.SeverityWarning, Code: diagcode.GPUMemoryTight, Path: pipeline.AttrPath("stage_overrides", "talker"),
			Summary: "Stages share a GPU", Detail: "Lower gpu_memory_utilization."},
		{Severity: pipeline.SeverityError, Code: diagcode.SplitStageNotFound, Summary: "Nothing to split"},
		{Severity: pipeline.SeverityError, Code: diagcode.GPUsExceeded, Path: pipeline.AttrPath("gpus"), Summary: "Too few GPUs", Detail: "Raise gpus."},
	})
	if len(diags) != 4 || diags.ErrorsCount() != 3 || diags.WarningsCount() != 1 {
		t.Fatalf("diags = %v", diags)
	}

	first, ok := diags[0].(diag.DiagnosticWithPath)
	if !ok || !first.Path().Equal(path.Root("decode").AtName("tensor_parallel_size")) {
		t.Errorf("first diagnostic path: %v", diags[0])
	}
	if got := diags[0].Detail(); got != "decode.tensor_parallel_size: NixlConnector needs the same size. [tp_mismatch]" {
		t.Errorf("detail = %q", got)
	}
	if diags[1].Severity() != diag.SeverityWarning || !strings.HasSuffix(diags[1].Detail(), "[gpu_memory_tight]") {
		t.Errorf("warning = %v", diags[1])
	}
	if _, ok := diags[2].(diag.DiagnosticWithPath); ok {
		t.Errorf("pathless engine diagnostic must be a plain error: %v", diags[2])
	}
	if diags[2].Detail() != "[split_stage_not_found]" {
		t.Errorf("detail = %q", diags[2].Detail())
	}
	// Terraform shows the line of a top-level attribute itself: no prefix.
	if diags[3].Detail() != "Raise gpus. [gpus_exceeded]" {
		t.Errorf("detail = %q", diags[3].Detail())
	}
}

// TestNoInternalErrorWording: a diagnostic says what is wrong and what to
// do; one only a provider defect can cause says so and asks for a report
// (addDefect), never a bare "Internal error".
func TestNoInternalErrorWording(t *testing.T) {
	root := filepath.Join("..")
	bare := regexp.MustCompile(`"Internal [Ee]rror"`)
	err := filepath.WalkDir(root, func(file string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(file, ".go") || strings.HasSuffix(file, "_test.go") {
			return err
		}
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if loc := bare.FindIndex(src); loc != nil {
			t.Errorf("%s:%d says \"Internal error\": use addDefect, or say what is wrong and how to fix it",
				file, 1+strings.Count(string(src[:loc[0]]), "\n"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
