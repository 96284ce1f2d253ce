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
// of the stage it does not write. The keys come in the order vllm-omni's
// own stage_args configs write them: the stage's identity, its runtime and
// engine_args, its edges and processors, then the stage's other keys.
func stageArgsStage(st Stage, s StageArgsPlan, path string) (*yaml.Node, []DroppedKey) {
	preset := s.Topology
	out := newMap()
	out.HeadComment, out.LineComment, out.FootComment = st.node.HeadComment, st.node.LineComment, st.node.FootComment
	mapSet(out, "stage_id", intNode(s.ID))
	copyKey(preset.node, "stage_type", out)
	switch s.Role {
	case Prefill:
		mapSet(out, "is_prefill_only", boolNode(true))
	case Decode:
		mapSet(out, "is_decode_only", boolNode(true))
	}
	keys := newStageArgsKeys(path, preset)
	keys.read(st, out.Content[0])
	mapSet(out, "runtime", keys.runtime)
	mapSet(out, "engine_args", keys.engine)
	writeStageFlow(out, s, preset, keys.rest)
	out.Content = append(out.Content, keys.rest.Content...)
	if text := joinComments(keys.pending); text != "" {
		last := out.Content[len(out.Content)-2]
		last.FootComment = joinComments([]string{last.FootComment, text})
	}
	return out, keys.dropped
}

// copyKey copies key, if from has it, into the mapping into.
func copyKey(from *yaml.Node, key string, into *yaml.Node) {
	if v := mapGet(from, key); v != nil {
		mapSet(into, key, deepCopy(v))
	}
}

// writeStageFlow writes what the plan and the preset say of the stage's
// place in the pipeline: its inputs, its input processors (not on
// prefill, which reads the request), whether it is a final output, and the
// preset's sampling unless the stage sets its own (in rest).
func writeStageFlow(out *yaml.Node, s StageArgsPlan, preset Stage, rest *yaml.Node) {
	if len(s.Inputs) > 0 {
		mapSet(out, "engine_input_source", flowIntSeq(s.Inputs))
	}
	if s.Role != Prefill {
		copyKey(preset.node, "custom_process_input_func", out)
		copyKey(preset.node, "sync_process_input_func", out)
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
}

// stageArgsKeys sorts a `stages` stage's keys into the sections of its
// stage_args stage, and keeps what it does not write: the keys, reported,
// and their comments, which go to the next key written, as in
// flattenStage.
type stageArgsKeys struct {
	path                  string
	runtime, engine, rest *yaml.Node
	// section is where each placed key was written: "", "runtime." or
	// "engine_args.", for the path of one that is later lost.
	section map[*yaml.Node]string
	pending []string
	dropped []DroppedKey
}

// newStageArgsKeys starts the sections, engine_args with the preset's
// topology keys.
func newStageArgsKeys(path string, preset Stage) *stageArgsKeys {
	keys := &stageArgsKeys{path: path, runtime: newMap(), engine: newMap(), rest: newMap(), section: map[*yaml.Node]string{}}
	presetEngine := preset.engineArgs()
	for _, k := range topologyEngineKeys {
		copyKey(presetEngine, k, keys.engine)
	}
	return keys
}

// read sorts every key of st; idKey is the stage_id key already written,
// which takes the comments of the stage's own.
//
// The deploy loader reads a flat engine key over the same key in a
// nested engine_args, and runtime.env over a flat env
// (vllm_omni/config/stage_config.py@001275f2 _parse_stage_deploy), so
// where both spell a key, the one it reads is the one written.
func (keys *stageArgsKeys) read(st Stage, idKey *yaml.Node) {
	for i := 0; i+1 < len(st.node.Content); i += 2 {
		k, v := st.node.Content[i], st.node.Content[i+1]
		switch {
		case k.Value == "stage_id":
			idKey.HeadComment = joinComments([]string{k.HeadComment, idKey.HeadComment})
			idKey.LineComment, idKey.FootComment = joinComments([]string{k.LineComment, v.LineComment}), k.FootComment
		case k.Value == "devices" || k.Value == "env" || k.Value == "num_replicas":
			keys.place(keys.runtime, k, v, false, "")
		case k.Value == "runtime":
			keys.placeAll(keys.runtime, k, v, true, "runtime.")
		case k.Value == "engine_args":
			keys.placeAll(keys.engine, k, v, false, "engine_args.")
		case isEngineKey(k.Value) && !pipelineDefinitionKeys[k.Value]:
			keys.place(keys.engine, k, v, true, "")
		case !pipelineDefinitionKeys[k.Value]:
			keys.place(keys.rest, k, v, true, "")
		default:
			// A topology key: the preset's is written in its place.
			keys.lose(k, v, "", "")
		}
	}
}

// lose keeps the comments of a key not written, and reports it under
// key unless key is "".
func (keys *stageArgsKeys) lose(k, v *yaml.Node, key, why string) {
	keys.pending = append(keys.pending, subtreeComments(k)...)
	keys.pending = append(keys.pending, subtreeComments(v)...)
	if key != "" {
		keys.dropped = append(keys.dropped, DroppedKey{Key: keys.path + "." + key, Line: k.Line, Why: why})
	}
}

// place is addPair for this stage: the key not written, of two that
// stand for one, is lost with its comments and reported by the section it
// was written in (in is "", "runtime." or "engine_args.").
func (keys *stageArgsKeys) place(m, k, v *yaml.Node, override bool, in string) {
	keys.section[k] = in
	if lk, lv := addPair(m, k, v, override); lk != nil {
		keys.lose(lk, lv, keys.section[lk]+lk.Value, "the stage also sets it where vllm-omni's deploy loader reads it first (vllm_omni/config/stage_config.py@001275f2 _parse_stage_deploy)")
	}
}

// placeAll places every entry of the section k: v, whose own comments go
// to the next key written.
func (keys *stageArgsKeys) placeAll(m, k, v *yaml.Node, override bool, in string) {
	keys.pending = append(keys.pending, subtreeComments(k)...)
	keys.pending = append(keys.pending, ownComments(v)...)
	for j := 0; j+1 < len(v.Content); j += 2 {
		keys.place(m, v.Content[j], v.Content[j+1], override, in)
	}
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
