package stageconfig

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

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
// Connectors and edges keep their keys' comments; the comments of the keys
// not written go to the next key written. It returns the keys it does not
// write that hold a setting of the user's (a key of runtime: the stages
// dialect has no place for, a key two sections both set), so that the
// caller can say so; the topology keys, which the registered pipeline
// gives, are not among them.
func (d *Document) ToStages(pipelineKey string) (*Document, []DroppedKey) {
	src := d.top()
	w := newTopWriter(src)
	mapSet(w.top, "pipeline", loaderStrNode(pipelineKey)) // read back as pipelineKey (SetPipeline)
	runtime := mapGet(src, "runtime")
	edges := mapGet(runtime, "edges")
	var dropped []DroppedKey
	// The keys not written are `runtime:` and an old `pipeline:`;
	// connectors and edges keep the comments of their keys under runtime.
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		switch k.Value {
		case "pipeline":
			w.drop(k, v)
		case "runtime":
			dropped = append(dropped, w.dropRuntime(k, v, edges != nil)...)
		case "stage_args":
			if conns := mapGet(runtime, "connectors"); conns != nil {
				w.put(pathKey(runtime, "connectors"), conns)
			}
			list := newSeq()
			list.HeadComment, list.LineComment, list.FootComment = v.HeadComment, v.LineComment, v.FootComment
			for j, st := range v.Content {
				flat, lost := flattenStage(st, fmt.Sprintf("stage_args[%d]", j))
				list.Content = append(list.Content, flat)
				dropped = append(dropped, lost...)
			}
			key := keyNode("stages")
			key.HeadComment, key.LineComment, key.FootComment = k.HeadComment, k.LineComment, k.FootComment
			w.put(key, list)
		default:
			w.put(k, v)
		}
	}
	if edges != nil {
		defaults := mapGet(runtime, "defaults")
		for _, e := range edges.Content {
			for j := 0; defaults != nil && j+1 < len(defaults.Content); j += 2 {
				if mapGet(e, defaults.Content[j].Value) == nil {
					// The key node itself, so that it reads as it did.
					k := deepCopy(defaults.Content[j])
					clearComments(k)
					v := deepCopy(defaults.Content[j+1])
					clearSubtreeComments(v)
					e.Content = append(e.Content, k, v)
				}
			}
		}
		if mapGet(w.top, "edges") != nil {
			mapSet(w.top, "edges", edges)
		} else {
			w.put(pathKey(runtime, "edges"), edges)
		}
	}
	return w.document(d, Stages), dropped
}

// dropRuntime leaves the top-level `runtime:` out, keeping the comments of
// every key in it that is not written elsewhere (connectors and edges are,
// by ToStages) for the next key written. `defaults` is folded into the
// edges when there are any. `enabled: true` sets nothing in the stages
// dialect, which reads its connectors and edges unconditionally (and no
// release reads runtime.enabled). Every other key is returned as dropped.
func (w *topWriter) dropRuntime(k, v *yaml.Node, hasEdges bool) []DroppedKey {
	w.pending = append(w.pending, ownComments(k)...)
	if v.Kind != yaml.MappingNode {
		w.pending = append(w.pending, subtreeComments(v)...)
		return nil
	}
	w.pending = append(w.pending, ownComments(v)...)
	var dropped []DroppedKey
	for i := 0; i+1 < len(v.Content); i += 2 {
		rk, rv := v.Content[i], v.Content[i+1]
		switch b, isBool := scalarBool(rv); {
		case rk.Value == "connectors" || rk.Value == "edges":
			continue
		case rk.Value == "defaults" && hasEdges:
		case rk.Value == "enabled" && isBool && b:
		default:
			why := "the stages dialect has no runtime section"
			if rk.Value == "defaults" {
				why = "the stages dialect folds edge defaults into each edge, and there is no edge"
			}
			dropped = append(dropped, DroppedKey{Key: "runtime." + rk.Value, Line: rk.Line, Why: why})
		}
		w.pending = append(w.pending, subtreeComments(rk)...)
		w.pending = append(w.pending, subtreeComments(rv)...)
	}
	return dropped
}

// topWriter writes the top level of a converted document. The comments of
// a key it drops, and of that key's value when it is a scalar, go to the
// next key it writes, or below the document when none follows.
type topWriter struct {
	top     *yaml.Node
	pending []string
}

func newTopWriter(src *yaml.Node) *topWriter {
	top := newMap()
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

// drop leaves a key out, keeping its comments and those of everything in
// its value for the next key written.
func (w *topWriter) drop(k, v *yaml.Node) {
	w.pending = append(w.pending, subtreeComments(k)...)
	w.pending = append(w.pending, subtreeComments(v)...)
}

// document is the converted document, with from's own comments and the
// comments still pending below the last key.
func (w *topWriter) document(from *Document, dialect Dialect) *Document {
	w.top.FootComment = joinComments(append(w.pending, w.top.FootComment))
	return &Document{root: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{w.top}, HeadComment: from.root.HeadComment, FootComment: from.root.FootComment}, Dialect: dialect}
}

// flattenStage turns one `stage_args` stage, at path, into a `stages`
// stage. The comments of the keys it drops, and of the runtime and
// engine_args keys it flattens, go to the next key it keeps. It returns
// the settings it does not write because another section of the stage
// sets the same key (the topology keys, which the registered pipeline
// gives, are dropped without a word).
func flattenStage(st *yaml.Node, path string) (*yaml.Node, []DroppedKey) {
	out := newMap()
	out.HeadComment, out.LineComment, out.FootComment = st.HeadComment, st.LineComment, st.FootComment
	var pending []string
	var dropped []DroppedKey
	carry := func(k, v *yaml.Node) {
		pending = append(pending, subtreeComments(k)...)
		pending = append(pending, subtreeComments(v)...)
	}
	// where names the section a key came from ("." for the stage itself,
	// ".runtime.", ".engine_args."). Where two sections set one key, the
	// one vllm-omni reads is written: engine_args for an engine setting,
	// otherwise the stage or its runtime; the other is reported.
	section := map[*yaml.Node]string{}
	keep := func(k, v *yaml.Node, where string) {
		if pipelineDefinitionKeys[k.Value] {
			carry(k, v)
			return
		}
		if i := mapIndex(out, k.Value); i >= 0 {
			loser, loserAt := k, where
			if isEngineKey(k.Value) == (where == ".engine_args.") {
				loser, loserAt = out.Content[i], section[out.Content[i]]
				k.HeadComment = joinComments(append(append(subtreeComments(loser), subtreeComments(out.Content[i+1])...), k.HeadComment))
				out.Content[i], out.Content[i+1] = k, v
				section[k] = where
			} else {
				carry(k, v)
			}
			winner := strings.TrimPrefix(section[out.Content[i]], ".") + k.Value
			dropped = append(dropped, DroppedKey{Key: path + loserAt + k.Value, Line: loser.Line,
				Why: fmt.Sprintf("the stages dialect has one %s per stage, and the stage's %s, which vllm-omni reads, is written", k.Value, winner)})
			return
		}
		if text := joinComments(pending); text != "" {
			k.HeadComment = joinComments([]string{text, k.HeadComment})
		}
		pending = nil
		section[k] = where
		out.Content = append(out.Content, k, v)
	}
	for i := 0; i+1 < len(st.Content); i += 2 {
		k, v := st.Content[i], st.Content[i+1]
		switch k.Value {
		case "runtime", "engine_args":
			// The section's key is not written; its entries are.
			pending = append(pending, subtreeComments(k)...)
			pending = append(pending, ownComments(v)...)
		}
		switch k.Value {
		case "runtime":
			for j := 0; j+1 < len(v.Content); j += 2 {
				rk, rv := v.Content[j], v.Content[j+1]
				if rk.Value == "max_batch_size" {
					if mapGet(mapGet(st, "engine_args"), "max_num_seqs") == nil {
						mk := keyNode("max_num_seqs")
						mk.HeadComment, mk.LineComment, mk.FootComment = rk.HeadComment, rk.LineComment, rk.FootComment
						keep(mk, rv, ".runtime.")
					} else {
						// The loader sets max_num_seqs from it only where
						// engine_args does not (stage_config.py@2ce15ab7:1045-1055).
						carry(rk, rv)
						dropped = append(dropped, DroppedKey{Key: path + ".runtime.max_batch_size", Line: rk.Line,
							Why: "engine_args.max_num_seqs, which vllm-omni reads over it, is written"})
					}
					continue
				}
				keep(rk, rv, ".runtime.")
			}
		case "engine_args":
			for j := 0; j+1 < len(v.Content); j += 2 {
				keep(v.Content[j], v.Content[j+1], ".engine_args.")
			}
		default:
			keep(k, v, ".")
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
	return out, dropped
}

// clearSubtreeComments removes every comment on n and below it, for a copy
// whose original keeps them.
func clearSubtreeComments(n *yaml.Node) {
	clearComments(n)
	for _, c := range n.Content {
		clearSubtreeComments(c)
	}
}
