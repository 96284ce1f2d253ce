package stageconfig

import "go.yaml.in/yaml/v3"

// Keys that describe the pipeline's topology or its Python definition. The
// `stages` dialect takes them from the registered pipeline, and a key left
// on a stage there would fall through to the engine's arguments.
var pipelineDefinitionKeys = map[string]bool{
	"stage_type": true, "engine_input_source": true, "final_output": true,
	"final_output_type": true, "is_comprehension": true, "is_prefill_only": true,
	"is_decode_only": true, "custom_process_input_func": true,
	"sync_process_input_func": true, "model_stage": true, "model_arch": true,
	"worker_type": true, "worker_cls": true, "scheduler_cls": true,
	"engine_output_type": true, "hf_config_name": true,
}

// ToStages rewrites a split `stage_args` document in the current
// upstream schema: flat engine keys, devices and env on the stage, the
// connectors and edges at the top level, edge defaults folded into each
// edge, topology keys dropped, and `pipeline:` naming the PD variant.
// Connectors and edges keep their keys' comments; the comments of the
// top-level keys not written go to the next key written.
func (d *Document) ToStages(pipelineKey string) *Document {
	src := d.Top()
	w := newTopWriter(src)
	MapSet(w.top, "pipeline", LoaderStrNode(pipelineKey)) // read back as pipelineKey (SetPipeline)
	runtime := MapGet(src, "runtime")
	// The keys not written are `runtime:` and an old `pipeline:`;
	// connectors and edges keep the comments of their keys under runtime.
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		switch k.Value {
		case "pipeline", "runtime":
			w.drop(k, v)
		case "stage_args":
			if conns := MapGet(runtime, "connectors"); conns != nil {
				w.put(PathKey(runtime, "connectors"), conns)
			}
			list := NewSeq()
			list.HeadComment, list.LineComment, list.FootComment = v.HeadComment, v.LineComment, v.FootComment
			for _, st := range v.Content {
				list.Content = append(list.Content, flattenStage(st))
			}
			key := KeyNode("stages")
			key.HeadComment, key.LineComment, key.FootComment = k.HeadComment, k.LineComment, k.FootComment
			w.put(key, list)
		default:
			w.put(k, v)
		}
	}
	if edges := MapGet(runtime, "edges"); edges != nil {
		defaults := MapGet(runtime, "defaults")
		for _, e := range edges.Content {
			for j := 0; defaults != nil && j+1 < len(defaults.Content); j += 2 {
				if MapGet(e, defaults.Content[j].Value) == nil {
					// The key node itself, so that it reads as it did.
					k := DeepCopy(defaults.Content[j])
					k.HeadComment, k.LineComment, k.FootComment = "", "", ""
					e.Content = append(e.Content, k, DeepCopy(defaults.Content[j+1]))
				}
			}
		}
		if MapGet(w.top, "edges") != nil {
			MapSet(w.top, "edges", edges)
		} else {
			w.put(PathKey(runtime, "edges"), edges)
		}
	}
	return w.document(d, Stages)
}

// topWriter writes the top level of a converted document. The comments of
// a key it drops, and of that key's value when it is a scalar, go to the
// next key it writes, or below the document when none follows.
type topWriter struct {
	top     *yaml.Node
	pending []string
}

func newTopWriter(src *yaml.Node) *topWriter {
	top := NewMap()
	top.HeadComment, top.FootComment = src.HeadComment, src.FootComment
	return &topWriter{top: top}
}

// put writes a key, a copy of k that carries the comments pending.
func (w *topWriter) put(k, v *yaml.Node) {
	cp := *k
	cp.HeadComment = joinComments(append(w.pending, k.HeadComment))
	w.pending = nil
	w.top.Content = append(w.top.Content, &cp, v)
}

// drop leaves a key out, keeping its comments for the next key written.
func (w *topWriter) drop(k, v *yaml.Node) {
	w.pending = append(w.pending, k.HeadComment, k.LineComment, k.FootComment)
	if v.Kind == yaml.ScalarNode {
		w.pending = append(w.pending, v.HeadComment, v.LineComment, v.FootComment)
	}
}

// document is the converted document, with from's own comments and the
// comments still pending below the last key.
func (w *topWriter) document(from *Document, dialect Dialect) *Document {
	w.top.FootComment = joinComments(append(w.pending, w.top.FootComment))
	return &Document{Root: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{w.top}, HeadComment: from.Root.HeadComment, FootComment: from.Root.FootComment}, Dialect: dialect}
}

// flattenStage turns one `stage_args` stage into a `stages` stage. The
// comments of the keys it drops, and of the runtime and engine_args keys it
// flattens, go to the next key it keeps.
func flattenStage(st *yaml.Node) *yaml.Node {
	out := NewMap()
	out.HeadComment, out.LineComment, out.FootComment = st.HeadComment, st.LineComment, st.FootComment
	var pending []string
	carry := func(k, v *yaml.Node) {
		pending = append(pending, k.HeadComment, k.LineComment, k.FootComment)
		if v != nil && (v.Kind == yaml.ScalarNode || v.Style&yaml.FlowStyle != 0) {
			pending = append(pending, v.HeadComment, v.LineComment, v.FootComment)
		}
	}
	keep := func(k, v *yaml.Node) {
		if pipelineDefinitionKeys[k.Value] || MapGet(out, k.Value) != nil {
			carry(k, v)
			return
		}
		if text := joinComments(pending); text != "" {
			k.HeadComment = joinComments([]string{text, k.HeadComment})
		}
		pending = nil
		out.Content = append(out.Content, k, v)
	}
	for i := 0; i+1 < len(st.Content); i += 2 {
		k, v := st.Content[i], st.Content[i+1]
		switch k.Value {
		case "runtime", "engine_args":
			carry(k, nil)
		}
		switch k.Value {
		case "runtime":
			for j := 0; j+1 < len(v.Content); j += 2 {
				rk, rv := v.Content[j], v.Content[j+1]
				if rk.Value == "max_batch_size" {
					if MapGet(MapGet(st, "engine_args"), "max_num_seqs") == nil {
						keep(KeyNode("max_num_seqs"), rv)
					}
					continue
				}
				keep(rk, rv)
			}
		case "engine_args":
			for j := 0; j+1 < len(v.Content); j += 2 {
				keep(v.Content[j], v.Content[j+1])
			}
		default:
			keep(k, v)
		}
	}
	// Comments left over from keys dropped at the end go below the last
	// key kept: yaml.v3 writes a foot comment of a mapping inside a list
	// after the next entry's dash or after the next top-level key, so on
	// the mapping itself they would describe another stage.
	if last := len(out.Content) - 2; last >= 0 {
		k := out.Content[last]
		k.FootComment = joinComments(append([]string{k.FootComment}, pending...))
	} else {
		out.FootComment = joinComments(append(append([]string{}, pending...), out.FootComment))
	}
	return out
}
