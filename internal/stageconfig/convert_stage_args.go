package stageconfig

import "go.yaml.in/yaml/v3"

// Keys of a stage_args stage that carry the topology the stages dialect
// leaves to vllm-omni's pipeline definitions, in the order they are written.
var topologyEngineKeys = []string{"model_stage", "model_arch", "worker_type", "worker_cls", "scheduler_cls", "engine_output_type", "hf_config_name"}

// PDRole is a stage's side of the prefill-decode pair, if any.
type PDRole int

// The PD roles.
const (
	NotPD PDRole = iota
	Prefill
	Decode
)

// StageArgsPlan is what ToStageArgs needs to know of one output stage
// beyond the `stages` stage itself.
type StageArgsPlan struct {
	ID     int
	Role   PDRole
	Inputs []int
	// Topology is the preset stage that gives the stage's topology: the
	// one with the same id in the unsplit pipeline.
	Topology Stage
}

// DroppedKey is a top-level key a conversion does not write, since the
// target dialect has no place for it.
type DroppedKey struct {
	Key  string
	Line int
}

// ToStageArgs rewrites a split `stages` document in the stage_args
// dialect, with plan[i] describing its stage i: engine settings move under
// engine_args, devices and env under runtime, connectors and edges into the
// runtime section, and each stage takes its topology from plan[i].Topology.
// The top-level keys the stage_args dialect has no place for (platforms,
// base_config, pipeline) are not written, and are returned so that the
// caller can say so; their comments, such as a file header written right
// above `pipeline:`, go to the next top-level key written.
func (d *Document) ToStageArgs(plan []StageArgsPlan) (*Document, []DroppedKey) {
	src := d.Top()
	var dropped []DroppedKey
	// The comments of a dropped key (often the file's header, written
	// right above `pipeline:`) go to the next key written.
	w := newTopWriter(src)
	runtime := NewMap()
	MapSet(runtime, "enabled", BoolNode(true))
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		switch k.Value {
		case "stages":
			list := NewSeq()
			list.HeadComment, list.LineComment, list.FootComment = v.HeadComment, v.LineComment, v.FootComment
			for j, st := range d.Stages() {
				list.Content = append(list.Content, stageArgsStage(st, plan[j]))
			}
			key := KeyNode("stage_args")
			key.HeadComment, key.LineComment, key.FootComment = k.HeadComment, k.LineComment, k.FootComment
			w.put(key, list)
		case "connectors", "edges":
			addPair(runtime, k, v, true)
		case "platforms", "base_config", "pipeline":
			dropped = append(dropped, DroppedKey{Key: k.Value, Line: k.Line})
			w.drop(k, v)
		default:
			w.put(k, v)
		}
	}
	MapSet(w.top, "runtime", runtime)
	return w.document(d, StageArgs), dropped
}

// stageArgsStage builds one stage_args stage from a `stages` stage and the
// preset stage that gives its topology.
func stageArgsStage(st Stage, s StageArgsPlan) *yaml.Node {
	preset := s.Topology
	out := NewMap()
	out.HeadComment, out.LineComment, out.FootComment = st.Node.HeadComment, st.Node.LineComment, st.Node.FootComment
	copyKey := func(from *yaml.Node, key string, into *yaml.Node) {
		if v := MapGet(from, key); v != nil {
			MapSet(into, key, DeepCopy(v))
		}
	}
	MapSet(out, "stage_id", IntNode(s.ID))
	copyKey(preset.Node, "stage_type", out)
	switch s.Role {
	case Prefill:
		MapSet(out, "is_prefill_only", BoolNode(true))
	case Decode:
		MapSet(out, "is_decode_only", BoolNode(true))
	}
	runtime := NewMap()
	engine := NewMap()
	presetEngine := preset.EngineArgs()
	for _, k := range topologyEngineKeys {
		copyKey(presetEngine, k, engine)
	}
	rest := NewMap()
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
		case IsEngineKey(k.Value) && !pipelineDefinitionKeys[k.Value]:
			addPair(engine, k, v, true)
		case !pipelineDefinitionKeys[k.Value]:
			addPair(rest, k, v, true)
		}
	}
	MapSet(out, "runtime", runtime)
	MapSet(out, "engine_args", engine)
	if len(s.Inputs) > 0 {
		MapSet(out, "engine_input_source", FlowIntSeq(s.Inputs))
	}
	for _, k := range []string{"custom_process_input_func", "sync_process_input_func"} {
		if s.Role != Prefill {
			copyKey(preset.Node, k, out)
		}
	}
	if s.Role == Prefill {
		MapSet(out, "final_output", BoolNode(false))
	} else {
		copyKey(preset.Node, "final_output", out)
		copyKey(preset.Node, "final_output_type", out)
	}
	copyKey(preset.Node, "is_comprehension", out)
	if MapGet(rest, "default_sampling_params") == nil {
		copyKey(preset.Node, "default_sampling_params", out)
	}
	out.Content = append(out.Content, rest.Content...)
	return out
}

// addPair adds a key and its value to a mapping. A key the mapping already
// has gets the new value in place when override is set, and is left as it
// is otherwise, so that the result never holds a key twice.
func addPair(m, k, v *yaml.Node, override bool) {
	if MapGet(m, k.Value) == nil {
		m.Content = append(m.Content, k, v)
		return
	}
	if override {
		MapSet(m, k.Value, v)
	}
}
