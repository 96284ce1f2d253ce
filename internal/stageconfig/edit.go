package stageconfig

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Edits of one stage that the split makes. Each keeps the keys it does not
// change where they were, with their comments, and places a new key where
// the recipes write it.

// afterSettings are the keys a stage's topology keys (final_output, its
// inputs, its connectors) follow, nearest first, when the stage gains one.
var afterSettings = []string{"engine_input_source", "engine_args", "runtime"}

// SplitStage returns a copy of d in which the stage at index is written
// twice, one after the other: the first copy becomes prefill and the
// second decode. The second does not repeat the stage's head comment.
// Every other stage is kept as it is.
func (d *Document) SplitStage(index int) *Document {
	doc := d.Clone()
	list := doc.stageList()
	unalias(list)
	nodes := make([]*yaml.Node, 0, len(list.Content)+1)
	for i, n := range list.Content {
		if i == index {
			pre, dec := deepCopy(n), deepCopy(n)
			dec.HeadComment = ""
			nodes = append(nodes, pre, dec)
			continue
		}
		nodes = append(nodes, n)
	}
	list.Content = nodes
	return doc
}

// SetID writes the stage's `stage_id`.
func (s Stage) SetID(id int) { mapSet(s.node, "stage_id", intNode(id)) }

// Delete removes a stage-level key; it reports whether the key was there.
func (s Stage) Delete(key string) bool { return mapDelete(s.node, key) }

// MarkPrefill and MarkDecode set is_prefill_only / is_decode_only next to
// the stage's identity, where the recipe writes it. The `stages` dialect has
// no such keys: there the registered PD pipeline gives the roles.
func (s Stage) MarkPrefill() { s.markRole("is_prefill_only") }

// MarkDecode sets is_decode_only next to the stage's identity, in the
// stage_args dialect only (see MarkPrefill).
func (s Stage) MarkDecode() { s.markRole("is_decode_only") }

func (s Stage) markRole(key string) {
	if s.Dialect == Stages {
		return
	}
	mapInsertAfter(s.node, key, boolNode(true), "stage_type", "stage_id")
}

// SetNotFinal writes `final_output: false` and drops `final_output_type`.
// The `stages` dialect leaves the topology to the registered pipeline, so
// there it is only corrected when the stage writes final_output itself.
func (s Stage) SetNotFinal() {
	if s.Dialect == Stages && s.get("final_output") == nil {
		return
	}
	mapInsertAfter(s.node, "final_output", boolNode(false), afterSettings...)
	mapDelete(s.node, "final_output_type")
}

// WriteIfAbsent writes key with value v on the stage when the stage does
// not set it, after its settings, and reports whether it wrote it.
func (s Stage) WriteIfAbsent(key string, v any) (bool, error) {
	if mapGet(s.node, key) != nil {
		return false, nil
	}
	n, err := valueNode(v)
	if err != nil {
		return false, err
	}
	mapInsertAfter(s.node, key, n, afterSettings...)
	return true, nil
}

// SetInputs rewrites `engine_input_source` with ids, keeping the list's
// style and its entries' comments (the i-th id takes the i-th entry's; the
// comments of entries beyond ids go to the last id), or removes it when ids
// is empty. A stage that gains one gets it after its engine settings. The
// `stages` dialect keeps inputs in the registered pipeline, so there this
// does nothing.
func (s Stage) SetInputs(ids []int) {
	if s.Dialect == Stages {
		return
	}
	old := s.get("engine_input_source")
	if old == nil && len(ids) == 0 {
		return
	}
	if len(ids) == 0 {
		deleteKeepingComments(s.node, "engine_input_source")
		return
	}
	n := flowIntSeq(ids)
	if old != nil && old.Kind == yaml.SequenceNode {
		n.Style = old.Style
		for i, e := range old.Content {
			to := n.Content[min(i, len(n.Content)-1)]
			if i < len(n.Content) {
				to.HeadComment, to.LineComment, to.FootComment = e.HeadComment, e.LineComment, e.FootComment
				continue
			}
			to.FootComment = joinComments(append([]string{to.FootComment}, subtreeComments(e)...))
		}
	}
	mapInsertAfter(s.node, "engine_input_source", n, afterSettings[1:]...)
}

// SetEngineInt writes an integer engine setting.
func (s Stage) SetEngineInt(key string, v int) { s.setEngine(key, intNode(v)) }

// SetEngineFloat writes a number engine setting.
func (s Stage) SetEngineFloat(key string, v float64) { s.setEngine(key, floatNode(v)) }

// SetKVTransfer writes entries into the stage's `kv_transfer_config`,
// keeping any other keys it already had there (kv_buffer_size, ...).
func (s Stage) SetKVTransfer(entries []KV) error {
	kv := s.ensureKVTransfer()
	for _, e := range entries {
		n, err := valueNode(e.Value)
		if err != nil {
			return err
		}
		mapSet(kv, e.Key, n)
	}
	return nil
}

// MergeKVExtra merges a value into
// `kv_transfer_config.kv_connector_extra_config`, as mergeValue does,
// creating either mapping when absent.
func (s Stage) MergeKVExtra(key string, v any) error {
	extra := mapEnsure(s.ensureKVTransfer(), "kv_connector_extra_config")
	return mergeValue(extra, key, v)
}

// ensureKVTransfer returns `kv_transfer_config`, written as an empty
// mapping when it is absent or not a mapping.
func (s Stage) ensureKVTransfer() *yaml.Node {
	kv := s.engine("kv_transfer_config")
	if kv == nil || kv.Kind != yaml.MappingNode {
		kv = newMap()
		s.setEngine("kv_transfer_config", kv)
	}
	return kv
}

// NameConnector points the stage's `input_connectors` or
// `output_connectors` (key) entry ref at the connector name, creating the
// mapping after the stage's inputs and settings when absent. was is the
// name the entry held before, if it held one.
func (s Stage) NameConnector(key, ref, name string) (was string, replaced bool) {
	m := s.get(key)
	if m == nil || m.Kind != yaml.MappingNode {
		m = newMap()
		mapInsertAfter(s.node, key, m, afterSettings...)
	}
	if old := mapGet(m, ref); old != nil {
		was, _ = scalarString(old)
		replaced = true
	}
	mapSet(m, ref, strNode(name))
	return was, replaced
}

// RenumberConnectorKeys renames every stage's `input_connectors`
// `from_stage_<n>` and `output_connectors` `to_stage_<n>` keys after the
// split of stage split, so that connectors keep joining the same stages:
// each id becomes newID(id), except that to_stage_<split> keeps its id,
// since what fed the split stage now feeds its first half (prefill).
func (d *Document) RenumberConnectorKeys(split int, newID func(int) int) {
	for _, st := range d.Stages() {
		for _, c := range []struct {
			key, prefix string
			output      bool
		}{{"input_connectors", "from_stage_", false}, {"output_connectors", "to_stage_", true}} {
			m := st.get(c.key)
			if m == nil || m.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(m.Content); i += 2 {
				k := m.Content[i]
				old, ok := ConnectorStageID(k.Value, c.prefix)
				if !ok {
					continue
				}
				id := newID(old)
				if c.output && old == split {
					id = old
				}
				k.Value = fmt.Sprintf("%s%d", c.prefix, id)
			}
		}
	}
}

// SetPipeline writes the top-level `pipeline:` key, first in the document
// when it is new, so that the deploy loader reads key: it resolves the
// value once (loaderStrNode), so a `${` in it is escaped.
func (d *Document) SetPipeline(key string) {
	mapInsertBefore(d.top(), "pipeline", loaderStrNode(key), mapKeys(d.top())...)
}

// SetTopBoolIfAbsent writes a top-level boolean the document does not set,
// after the first of the keys in after that it has.
func (d *Document) SetTopBoolIfAbsent(key string, v bool, after ...string) {
	if mapGet(d.top(), key) == nil {
		mapInsertAfter(d.top(), key, boolNode(v), after...)
	}
}
