package pipeline

import (
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// output is how the plan writes its config, as chooseRelease decides it:
// the dialect, the `pipeline:` key of a stages output (registered, or the
// user's own), and for a stages base written as stage_args the preset
// stages, by id, each stage takes its topology from.
type output struct {
	dialect  stageconfig.Dialect
	pipeline string
	topology map[int]stageconfig.Stage
}

// convert writes the planned document in the output's dialect; the
// planned stages say which base stage each one is.
func convert(doc *stageconfig.Document, out output, planned stageLayout, ds *Diagnostics) *stageconfig.Document {
	if out.dialect == stageconfig.StageArgs && doc.Dialect == stageconfig.StageArgs {
		return doc
	}
	if out.dialect == stageconfig.StageArgs {
		// chooseRelease made sure a preset gives the topology.
		return toStageArgs(doc, out.topology, planned, ds)
	}
	if doc.Dialect != stageconfig.Stages {
		var dropped []stageconfig.DroppedKey
		doc, dropped = doc.ToStages(out.pipeline)
		warnDropped(dropped, stageconfig.StageArgs, out.dialect, ds)
	} else {
		doc.SetPipeline(out.pipeline)
	}
	// The deploy loader assumes async_chunk: true, which the sync input
	// processors of the recipe do not serve (releases.DeployLoader).
	doc.SetTopBoolIfAbsent("async_chunk", false, "pipeline")
	return doc
}

// topologyPreset finds an embedded preset that describes the base config's
// pipeline: the named preset, the one its `pipeline:` key names, or the one
// the model names, as long as it has a stage for every base stage id. Past
// the model's own, the first of its family's presets that has every stage
// serves, for an id no preset knows exactly too: a family's stages with one
// id share a topology (the thinker is stage 0 in each), and this is only
// how the stages' keys are written, not which pipeline the model runs.
func topologyPreset(spec Spec, base baseConfig) (map[int]stageconfig.Stage, bool) {
	var candidates []string
	switch key, _ := base.doc.TopString("pipeline"); {
	case spec.Preset != "":
		candidates = []string{spec.Preset}
	case presets.Known(key):
		candidates = []string{key}
	default:
		m := presets.ForModel(spec.Model)
		if name, ok := m.Preset(); ok {
			candidates = []string{name}
		}
		if m.Family != nil {
			candidates = append(candidates, m.Family.Presets...)
		}
	}
	for _, name := range candidates {
		if byID, ok := topologyOf(name, base.g); ok {
			return byID, true
		}
	}
	return nil, false
}

// topologyOf is a preset's stages by id, if it has one for every stage of
// the base graph g.
func topologyOf(name string, g *graph) (map[int]stageconfig.Stage, bool) {
	doc, err := presets.Shared(name) // read only
	if err != nil {
		return nil, false
	}
	byID := map[int]stageconfig.Stage{}
	for _, s := range doc.Stages() {
		if id, ok := s.ID(); ok {
			byID[id] = s
		}
	}
	for _, s := range g.stages {
		if _, ok := byID[s.id]; !ok {
			return nil, false
		}
	}
	return byID, true
}

// toStageArgs writes the split `stages` document in the stage_args
// dialect, each planned stage taking its topology from the preset stage
// with its base id, and says which top-level keys could not be written.
func toStageArgs(doc *stageconfig.Document, topology map[int]stageconfig.Stage, planned stageLayout, ds *Diagnostics) *stageconfig.Document {
	plan := make([]stageconfig.StageArgsPlan, len(planned.stages))
	for i, s := range planned.stages {
		plan[i] = stageconfig.StageArgsPlan{ID: s.id, Inputs: s.inputs, Topology: topology[s.base.id]}
		switch s.role {
		case RolePrefill:
			plan[i].Role = stageconfig.Prefill
		case RoleDecode:
			plan[i].Role = stageconfig.Decode
		}
	}
	out, dropped := doc.ToStageArgs(plan)
	warnDropped(dropped, stageconfig.Stages, stageconfig.StageArgs, ds)
	return out
}

// warnDropped says, for each key a conversion into the dialect to did not
// write, which key it is and why; keep is the base config's own dialect,
// in which it would be.
func warnDropped(dropped []stageconfig.DroppedKey, keep, to stageconfig.Dialect, ds *Diagnostics) {
	for _, k := range dropped {
		ds.warnf(diagcode.FormatConversionDroppedKey, AttrPath("format"), "a key of the base config is not written in the "+string(to)+" dialect",
			"the base config's %s (line %d) is not written: %s. Set format = %q to keep it, or move the setting where the %s dialect reads it.", k.Key, k.Line, k.Why, keep, to)
	}
}
