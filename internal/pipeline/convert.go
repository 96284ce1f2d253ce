package pipeline

import (
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// convert writes the planned document in the requested dialect.
func (p *planner) convert(doc *stageconfig.Document) *stageconfig.Document {
	if p.format == stageconfig.StageArgs && doc.Dialect == stageconfig.StageArgs {
		return doc
	}
	if p.format == stageconfig.StageArgs {
		// chooseRelease made sure a preset gives the topology.
		topology, _ := p.topologyPreset()
		return p.toStageArgs(doc, topology)
	}
	// chooseRelease found the key: registered, or the user's own.
	key := p.release.PipelineKey
	if doc.Dialect != stageconfig.Stages {
		var dropped []stageconfig.DroppedKey
		doc, dropped = doc.ToStages(key)
		p.warnDropped(dropped, stageconfig.StageArgs)
	} else {
		doc.SetPipeline(key)
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
func (p *planner) topologyPreset() (map[int]stageconfig.Stage, bool) {
	var candidates []string
	switch key, _ := p.base.TopString("pipeline"); {
	case p.spec.Preset != "":
		candidates = []string{p.spec.Preset}
	case presets.Known(key):
		candidates = []string{key}
	default:
		m := presets.ForModel(p.spec.Model)
		if name, ok := m.Preset(); ok {
			candidates = []string{name}
		}
		if m.Family != nil {
			candidates = append(candidates, m.Family.Presets...)
		}
	}
	for _, name := range candidates {
		if byID, ok := p.topologyOf(name); ok {
			return byID, true
		}
	}
	return nil, false
}

// topologyOf is a preset's stages by id, if it has one for every base
// stage.
func (p *planner) topologyOf(name string) (map[int]stageconfig.Stage, bool) {
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
	for _, s := range p.g.stages {
		if _, ok := byID[s.id]; !ok {
			return nil, false
		}
	}
	return byID, true
}

// toStageArgs writes the split `stages` document in the stage_args
// dialect, each stage taking its topology from the preset stage with its
// base id, and says which top-level keys could not be written.
func (p *planner) toStageArgs(doc *stageconfig.Document, topology map[int]stageconfig.Stage) *stageconfig.Document {
	plan := make([]stageconfig.StageArgsPlan, len(p.planned.stages))
	for i, s := range p.planned.stages {
		plan[i] = stageconfig.StageArgsPlan{ID: s.id, Inputs: s.inputs, Topology: topology[s.base.id]}
		switch s.role {
		case RolePrefill:
			plan[i].Role = stageconfig.Prefill
		case RoleDecode:
			plan[i].Role = stageconfig.Decode
		}
	}
	out, dropped := doc.ToStageArgs(plan)
	p.warnDropped(dropped, stageconfig.Stages)
	return out
}

// warnDropped says, for each key a conversion did not write, which key it
// is and why; keep is the base config's own dialect, in which it would be.
func (p *planner) warnDropped(dropped []stageconfig.DroppedKey, keep stageconfig.Dialect) {
	for _, k := range dropped {
		p.ds.warnf(diagcode.FormatConversionDroppedKey, AttrPath("format"), "a key of the base config is not written in the "+string(p.format)+" dialect",
			"the base config's %s (line %d) is not written: %s. Set format = %q to keep it, or move the setting where the %s dialect reads it.", k.Key, k.Line, k.Why, keep, p.format)
	}
}
