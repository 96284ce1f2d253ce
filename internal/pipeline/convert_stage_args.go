package pipeline

import (
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
	"go.yaml.in/yaml/v3"
)

// Keys of a stage_args stage that carry the topology the stages dialect
// leaves to vllm-omni's pipeline definitions, in the order they are written.
var topologyEngineKeys = []string{"model_stage", "model_arch", "worker_type", "worker_cls", "scheduler_cls", "engine_output_type", "hf_config_name"}

// topologyPreset finds an embedded preset that describes the base config's
// pipeline: the named preset, the one its `pipeline:` key names, or the one
// the model matches, as long as it has a stage for every base stage id.
func (p *planner) topologyPreset() (map[int]stageconfig.Stage, bool) {
	name := p.spec.Preset
	if key, _ := stageconfig.ScalarString(stageconfig.MapGet(p.base.Top(), "pipeline")); name == "" && presets.Known(key) {
		name = key
	}
	if name == "" {
		name, _ = presets.ForModel(p.spec.Model)
	}
	if name == "" {
		return nil, false
	}
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

// toStageArgsDialect rewrites a split `stages` document in the stage_args
// dialect, taking each stage's topology from the preset stage with the same
// base id: engine settings move under engine_args, devices and env under
// runtime, connectors and edges into the runtime section. Keys the
// stage_args dialect has no place for (platforms, base_config, pipeline) are
// reported, not silently dropped.
func (p *planner) toStageArgsDialect(doc *stageconfig.Document, topology map[int]stageconfig.Stage) *stageconfig.Document {
	src := doc.Top()
	top := stageconfig.NewMap()
	top.HeadComment, top.FootComment = src.HeadComment, src.FootComment
	runtime := stageconfig.NewMap()
	stageconfig.MapSet(runtime, "enabled", stageconfig.BoolNode(true))
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		switch k.Value {
		case "stages":
			list := stageconfig.NewSeq()
			list.HeadComment, list.LineComment, list.FootComment = v.HeadComment, v.LineComment, v.FootComment
			for j, st := range doc.Stages() {
				list.Content = append(list.Content, p.stageArgsStage(st, p.stages[j], topology[p.stages[j].base.id]))
			}
			key := stageconfig.KeyNode("stage_args")
			key.HeadComment, key.LineComment, key.FootComment = k.HeadComment, k.LineComment, k.FootComment
			top.Content = append(top.Content, key, list)
		case "connectors", "edges":
			stageconfig.MapSet(runtime, k.Value, v)
		case "platforms", "base_config", "pipeline":
			p.ds.warnf(diagcode.FormatConversionDroppedKey, AttrPath("format"), "a key has no place in the stage_args dialect",
				"the base config's top-level %q (line %d) is not written: the stage_args dialect has no such key. Keep format = \"stages\" if it matters.", k.Value, k.Line)
		default:
			top.Content = append(top.Content, k, v)
		}
	}
	stageconfig.MapSet(top, "runtime", runtime)
	return &stageconfig.Document{Root: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}, HeadComment: doc.Root.HeadComment, FootComment: doc.Root.FootComment}, Dialect: stageconfig.StageArgs}
}

// stageArgsStage builds one stage_args stage from a `stages` stage and the
// preset stage that gives its topology.
func (p *planner) stageArgsStage(st stageconfig.Stage, s *plannedStage, preset stageconfig.Stage) *yaml.Node {
	out := stageconfig.NewMap()
	out.HeadComment, out.LineComment, out.FootComment = st.Node.HeadComment, st.Node.LineComment, st.Node.FootComment
	copyKey := func(from *yaml.Node, key string, into *yaml.Node) {
		if v := stageconfig.MapGet(from, key); v != nil {
			stageconfig.MapSet(into, key, stageconfig.DeepCopy(v))
		}
	}
	stageconfig.MapSet(out, "stage_id", stageconfig.IntNode(s.id))
	copyKey(preset.Node, "stage_type", out)
	switch s.role {
	case RolePrefill:
		stageconfig.MapSet(out, "is_prefill_only", stageconfig.BoolNode(true))
	case RoleDecode:
		stageconfig.MapSet(out, "is_decode_only", stageconfig.BoolNode(true))
	}
	runtime := stageconfig.NewMap()
	engine := stageconfig.NewMap()
	presetEngine := preset.EngineArgs()
	for _, k := range topologyEngineKeys {
		copyKey(presetEngine, k, engine)
	}
	rest := stageconfig.NewMap()
	// The deploy loader reads a flat engine key over the same key in a
	// nested engine_args, and runtime.env over a flat env
	// (vllm_omni/config/stage_config.py@001275f2 _parse_stage_deploy), so
	// where both spell a key, the one it reads is the one written.
	for i := 0; i+1 < len(st.Node.Content); i += 2 {
		k, v := st.Node.Content[i], st.Node.Content[i+1]
		switch {
		case k.Value == "stage_id":
		case k.Value == "devices" || k.Value == "env" || k.Value == "num_replicas":
			addPair(runtime, k, v, false)
		case k.Value == "runtime":
			for j := 0; j+1 < len(v.Content); j += 2 {
				addPair(runtime, v.Content[j], v.Content[j+1], true)
			}
		case k.Value == "engine_args":
			for j := 0; j+1 < len(v.Content); j += 2 {
				addPair(engine, v.Content[j], v.Content[j+1], false)
			}
		case stageconfig.IsEngineKey(k.Value) && !pipelineDefinitionKeys[k.Value]:
			addPair(engine, k, v, true)
		case !pipelineDefinitionKeys[k.Value]:
			addPair(rest, k, v, true)
		}
	}
	stageconfig.MapSet(out, "runtime", runtime)
	stageconfig.MapSet(out, "engine_args", engine)
	if len(s.inputs) > 0 {
		stageconfig.MapSet(out, "engine_input_source", stageconfig.FlowIntSeq(s.inputs))
	}
	for _, k := range []string{"custom_process_input_func", "sync_process_input_func"} {
		if s.role != RolePrefill {
			copyKey(preset.Node, k, out)
		}
	}
	if s.role == RolePrefill {
		stageconfig.MapSet(out, "final_output", stageconfig.BoolNode(false))
	} else {
		copyKey(preset.Node, "final_output", out)
		copyKey(preset.Node, "final_output_type", out)
	}
	copyKey(preset.Node, "is_comprehension", out)
	if stageconfig.MapGet(rest, "default_sampling_params") == nil {
		copyKey(preset.Node, "default_sampling_params", out)
	}
	out.Content = append(out.Content, rest.Content...)
	return out
}

// addPair adds a key and its value to a mapping. A key the mapping already
// has gets the new value in place when override is set, and is left as it
// is otherwise, so that the result never holds a key twice.
func addPair(m, k, v *yaml.Node, override bool) {
	if stageconfig.MapGet(m, k.Value) == nil {
		m.Content = append(m.Content, k, v)
		return
	}
	if override {
		stageconfig.MapSet(m, k.Value, v)
	}
}
