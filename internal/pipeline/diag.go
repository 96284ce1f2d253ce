package pipeline

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/attrpath"
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// Severity of a Diagnostic.
type Severity int

const (
	// SeverityError stops the plan.
	SeverityError Severity = iota
	// SeverityWarning is reported and the plan goes on.
	SeverityWarning
)

// Step is one step of an attribute path (attrpath.Step).
type Step = attrpath.Step

// Path locates the input a Diagnostic concerns, in the provider's schema
// (attrpath.Path).
type Path = attrpath.Path

// AttrPath builds a path of attribute names.
func AttrPath(names ...string) Path { return attrpath.Of(names...) }

// Diagnostic is one problem found while planning.
type Diagnostic struct {
	Severity Severity
	Code     diagcode.Code // stable identifier, such as diagcode.TPMismatch ("tp_mismatch")
	Path     Path
	Summary  string
	Detail   string // what is wrong and how to fix it
}

func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	if len(d.Path) > 0 {
		b.WriteString(d.Path.String() + ": ")
	}
	b.WriteString(d.Summary)
	if d.Detail != "" {
		b.WriteString(": " + d.Detail)
	}
	b.WriteString(" [" + d.Code.String() + "]")
	return b.String()
}

// Diagnostics collects problems in the order they were found.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns only the errors.
func (ds Diagnostics) Errors() Diagnostics { return ds.filter(SeverityError) }

// ErrorsUnder reports whether an error concerns one of the top-level
// attributes named, or no attribute at all (a problem of the whole plan).
func (ds Diagnostics) ErrorsUnder(attrs ...string) bool {
	for _, d := range ds {
		if d.Severity != SeverityError {
			continue
		}
		if len(d.Path) == 0 {
			return true
		}
		for _, a := range attrs {
			if d.Path[0].Name == a {
				return true
			}
		}
	}
	return false
}

// Warnings returns only the warnings.
func (ds Diagnostics) Warnings() Diagnostics { return ds.filter(SeverityWarning) }

func (ds Diagnostics) filter(s Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// Codes lists the codes in order, for tests and summaries.
func (ds Diagnostics) Codes() []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Code.String()
	}
	return out
}

func (ds *Diagnostics) errorf(code diagcode.Code, path Path, summary, detail string, args ...any) {
	*ds = append(*ds, Diagnostic{Severity: SeverityError, Code: code, Path: path, Summary: summary, Detail: fmt.Sprintf(detail, args...)})
}

func (ds *Diagnostics) warnf(code diagcode.Code, path Path, summary, detail string, args ...any) {
	*ds = append(*ds, Diagnostic{Severity: SeverityWarning, Code: code, Path: path, Summary: summary, Detail: fmt.Sprintf(detail, args...)})
}
