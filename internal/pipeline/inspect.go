package pipeline

import (
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// ConfigSummary is what parse_stage_config reports about a config.
type ConfigSummary struct {
	Format string
	Stages []SummaryStage
	Edges  []Edge
}

// SummaryStage is one stage as written in a config.
type SummaryStage struct {
	StageID     int
	ModelStage  string
	Inputs      []int
	Devices     []int
	FinalOutput bool
}

// Inspect parses a config in either dialect and summarises its stage graph.
// Only a config that cannot be read is an error; use Check for the rules.
// Edges are the ones the config writes, or, when it writes none, the ones
// its stages' inputs imply.
func Inspect(src []byte) (*ConfigSummary, error) {
	doc, err := stageconfig.Parse(src)
	if err != nil {
		return nil, err
	}
	var ds Diagnostics
	g := readGraph(doc, &ds, nil)
	sum := &ConfigSummary{Format: string(doc.Dialect), Stages: make([]SummaryStage, 0, len(g.stages))}
	for _, s := range g.stages {
		sum.Stages = append(sum.Stages, SummaryStage{
			StageID: s.id, ModelStage: s.modelStage, Inputs: s.inputs, Devices: s.devices, FinalOutput: s.final,
		})
	}
	if g.hasEdges {
		sum.Edges = g.edges
	} else {
		sum.Edges = g.inputEdges()
	}
	return sum, nil
}

// Check runs every rule vllm-omni applies to a config, and the ones this
// provider adds, on a config as written. It returns nil for a sound config.
// A config that cannot be parsed gives one diagnostic that says where.
func Check(src []byte) Diagnostics { return CheckFor(src, "") }

// CheckFor is Check, and with a version also what that vllm-omni release
// refuses or would start with PD off (releases.Conform, on the config
// alone: there is no launch line to check).
func CheckFor(src []byte, version string) Diagnostics {
	doc, err := stageconfig.Parse(src)
	if err != nil {
		var ds Diagnostics
		for _, pe := range parseErrors(err) {
			ds = append(ds, Diagnostic{Severity: SeverityError, Code: diagcode.ConfigUnreadable, Summary: "the config cannot be read", Detail: pe.Error()})
		}
		return ds
	}
	var ds Diagnostics
	for _, f := range doc.Lint() {
		ds.errorf(f.Code, nil, f.Summary, "%s", f.Detail)
	}
	g := readGraph(doc, &ds, nil)
	checkGraph(g, &ds, nil, true)
	if version == "" {
		return ds
	}
	rel, problem := releases.Lookup(version)
	if problem != nil {
		ds.errorf(problem.Code, nil, problem.Summary, "%s", problem.Detail)
		return ds
	}
	for _, v := range releases.Conform(rel, releases.Deployment{Doc: doc}) {
		ds.errorf(v.Code, nil, "vllm-omni "+rel.Version+" would not run this config", "%s.", v.Detail)
	}
	return ds
}
