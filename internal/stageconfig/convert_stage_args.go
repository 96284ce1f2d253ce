package stageconfig

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Keys of a stage_args stage that carry the topology the stages dialect
// leaves to vllm-omni's pipeline definitions, in the order they are written.
var topologyEngineKeys = []string{"model_stage", "model_arch", "worker_type", "worker_cls", "scheduler_cls", "engine_output_type", "hf_config_name"}

// PDRole is a stage's side of the prefill-decode pair, if any.
type PDRole int

// The PD roles.
const (
	notPD PDRole = iota
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

// DroppedKey is a key a conversion does not write: the target dialect has
// no place for it, or another key the loader reads over it is written.
type DroppedKey struct {
	Key  string // its path in the base config, such as runtime.enabled
	Line int
	Why  string // why it is not written, for the warning
}

// ToStageArgs rewrites a split `stages` document in the stage_args
// dialect, with plan[i] describing its stage i: engine settings move under
// engine_args, devices and env under runtime, connectors and edges into the
// runtime section, and each stage takes its topology from plan[i].Topology.
// The top-level keys the stage_args dialect has no place for (platforms,
// base_config, pipeline), and a stage's key that the stage also sets where
// the deploy loader reads it first, are not written, and are returned so
// that the caller can say so; their comments, such as a file header
// written right above `pipeline:`, go to the next key written.
func (d *Document) ToStageArgs(plan []StageArgsPlan) (*Document, []DroppedKey) {
	src := d.top()
	var dropped []DroppedKey
	// The comments of a dropped key (often the file's header, written
	// right above `pipeline:`) go to the next key written.
	w := newTopWriter(src)
	runtime := newMap()
	mapSet(runtime, "enabled", boolNode(true))
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		switch k.Value {
		case "stages":
			list := newSeq()
			list.HeadComment, list.LineComment, list.FootComment = v.HeadComment, v.LineComment, v.FootComment
			for j, st := range d.Stages() {
				out, lost := stageArgsStage(st, plan[j], fmt.Sprintf("stages[%d]", j))
				list.Content = append(list.Content, out)
				dropped = append(dropped, lost...)
			}
			key := keyNode("stage_args")
			key.HeadComment, key.LineComment, key.FootComment = k.HeadComment, k.LineComment, k.FootComment
			w.put(key, list)
		case "connectors", "edges":
			addPair(runtime, k, v, true)
		case "platforms", "base_config", "pipeline":
			dropped = append(dropped, DroppedKey{Key: k.Value, Line: k.Line, Why: "the stage_args dialect has no such key"})
			w.drop(k, v)
		default:
			w.put(k, v)
		}
	}
	mapSet(w.top, "runtime", runtime)
	return w.document(d, StageArgs), dropped
}

// stageArgsStage builds one stage_args stage, at path, from a `stages`
// stage and the preset stage that gives its topology, and returns the keys
// of the stage it does not write.
func stageArgsStage(st Stage, s StageArgsPlan, path string) (*yaml.Node, []DroppedKey) {
	preset := s.Topology
	out := newMap()
	out.HeadComment, out.LineComment, out.FootComment = st.node.HeadComment, st.node.LineComment, st.node.FootComment
	copyKey := func(from *yaml.Node, key string, into *yaml.Node) {
		if v := mapGet(from, key); v != nil {
			mapSet(into, key, deepCopy(v))
		}
	}
	mapSet(out, "stage_id", intNode(s.ID))
	var dropped []DroppedKey
	// A key the stage does not write keeps its comments on the next one
	// it does, as in flattenStage.
	var pending []string
	lose := func(k, v *yaml.Node, key, why string) {
		pending = append(pending, subtreeComments(k)...)
		pending = append(pending, subtreeComments(v)...)
		if key != "" {
			dropped = append(dropped, DroppedKey{Key: path + "." + key, Line: k.Line, Why: why})
		}
	}
	// place is addPair for this stage: the key not written, of two that
	// stand for one, is lost with its comments and reported by the
	// section it was written in (section is "", "runtime." or
	// "engine_args.").
	section := map[*yaml.Node]string{}
	place := func(m, k, v *yaml.Node, override bool, in string) {
		section[k] = in
		if lk, lv := addPair(m, k, v, override); lk != nil {
			lose(lk, lv, section[lk]+lk.Value, "the stage also sets it where vllm-omni's deploy loader reads it first (vllm_omni/config/stage_config.py@001275f2 _parse_stage_deploy)")
		}
	}
	copyKey(preset.node, "stage_type", out)
	switch s.Role {
	case Prefill:
		mapSet(out, "is_prefill_only", boolNode(true))
	case Decode:
		mapSet(out, "is_decode_only", boolNode(true))
	}
	runtime := newMap()
	engine := newMap()
	presetEngine := preset.engineArgs()
	for _, k := range topologyEngineKeys {
		copyKey(presetEngine, k, engine)
	}
	rest := newMap()
	// The deploy loader reads a flat engine key over the same key in a
	// nested engine_args, and runtime.env over a flat env
	// (vllm_omni/config/stage_config.py@001275f2 _parse_stage_deploy), so
	// where both spell a key, the one it reads is the one written.
	for i := 0; i+1 < len(st.node.Content); i += 2 {
		k, v := st.node.Content[i], st.node.Content[i+1]
		switch {
		case k.Value == "stage_id":
			sk := out.Content[0]
			sk.HeadComment = joinComments([]string{k.HeadComment, sk.HeadComment})
			sk.LineComment, sk.FootComment = joinComments([]string{k.LineComment, v.LineComment}), k.FootComment
		case k.Value == "devices" || k.Value == "env" || k.Value == "num_replicas":
			place(runtime, k, v, false, "")
		case k.Value == "runtime":
			pending = append(pending, subtreeComments(k)...)
			pending = append(pending, ownComments(v)...)
			for j := 0; j+1 < len(v.Content); j += 2 {
				place(runtime, v.Content[j], v.Content[j+1], true, "runtime.")
			}
		case k.Value == "engine_args":
			pending = append(pending, subtreeComments(k)...)
			pending = append(pending, ownComments(v)...)
			for j := 0; j+1 < len(v.Content); j += 2 {
				place(engine, v.Content[j], v.Content[j+1], false, "engine_args.")
			}
		case isEngineKey(k.Value) && !pipelineDefinitionKeys[k.Value]:
			place(engine, k, v, true, "")
		case !pipelineDefinitionKeys[k.Value]:
			place(rest, k, v, true, "")
		default:
			// A topology key: the preset's is written in its place.
			lose(k, v, "", "")
		}
	}
	mapSet(out, "runtime", runtime)
	mapSet(out, "engine_args", engine)
	if len(s.Inputs) > 0 {
		mapSet(out, "engine_input_source", flowIntSeq(s.Inputs))
	}
	for _, k := range []string{"custom_process_input_func", "sync_process_input_func"} {
		if s.Role != Prefill {
			copyKey(preset.node, k, out)
		}
	}
	if s.Role == Prefill {
		mapSet(out, "final_output", boolNode(false))
	} else {
		copyKey(preset.node, "final_output", out)
		copyKey(preset.node, "final_output_type", out)
	}
	copyKey(preset.node, "is_comprehension", out)
	if mapGet(rest, "default_sampling_params") == nil {
		copyKey(preset.node, "default_sampling_params", out)
	}
	out.Content = append(out.Content, rest.Content...)
	if text := joinComments(pending); text != "" {
		last := out.Content[len(out.Content)-2]
		last.FootComment = joinComments([]string{last.FootComment, text})
	}
	return out, dropped
}

// addPair adds a key and its value to a mapping. A key the mapping already
// has gets the new value in place when override is set, and is left as it
// is otherwise, so that the result never holds a key twice. It returns the
// pair that is not written (k and v, or the one replaced), or nils.
func addPair(m, k, v *yaml.Node, override bool) (lostKey, lostValue *yaml.Node) {
	i := mapIndex(m, k.Value)
	if i < 0 {
		m.Content = append(m.Content, k, v)
		return nil, nil
	}
	if !override {
		return k, v
	}
	oldK, oldV := m.Content[i], m.Content[i+1]
	m.Content[i], m.Content[i+1] = k, v
	return oldK, oldV
}
