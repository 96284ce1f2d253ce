package pipeline

import (
	"fmt"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
	"go.yaml.in/yaml/v3"
)

// apply writes the plan into a copy of the base config: the split stage
// becomes the prefill and decode stages, every later stage is renumbered,
// and each stage gets its devices and settings. Everything else in the base
// config is left as it was.
func (p *planner) apply() (*stageconfig.Document, error) {
	doc := p.base.Clone()
	list := doc.StageList()
	stageconfig.Unalias(list)
	k := p.split.id

	// Build the new stage list: the split stage's node is replaced by two
	// copies, every other node is kept (and edited in place below).
	nodes := make([]*yaml.Node, 0, len(list.Content)+1)
	for i, n := range list.Content {
		if i == p.split.stage.Index {
			pre, dec := stageconfig.DeepCopy(n), stageconfig.DeepCopy(n)
			if n.HeadComment != "" {
				dec.HeadComment = ""
			}
			nodes = append(nodes, pre, dec)
			continue
		}
		nodes = append(nodes, n)
	}
	list.Content = nodes

	for i, s := range p.stages {
		st := stageconfig.Stage{Node: nodes[i], Dialect: doc.Dialect, Index: i}
		stageconfig.MapSet(st.Node, "stage_id", stageconfig.IntNode(s.id))
		if err := p.applyStage(st, s); err != nil {
			return nil, err
		}
	}
	p.renumberConnectors(doc)
	p.writeCrossHostConnectors(doc)
	p.writeEdges(doc)
	p.renumberPlatforms(doc, k)
	return doc, nil
}

func (p *planner) applyStage(st stageconfig.Stage, s *plannedStage) error {
	switch s.role {
	case RolePrefill:
		p.markRole(st, "is_prefill_only")
		// The stages dialect leaves topology to the registered pipeline, so
		// final_output is only corrected there when the base wrote it.
		if st.Dialect == stageconfig.StageArgs || st.Get("final_output") != nil {
			stageconfig.MapInsertAfter(st.Node, "final_output", stageconfig.BoolNode(false), "engine_input_source", "engine_args", "runtime")
			stageconfig.MapDelete(st.Node, "final_output_type")
		}
		stageconfig.MapDelete(st.Node, "output_connectors")
		if err := mergeEngineArgs(st, p.spec.Prefill.EngineArgs); err != nil {
			return fmt.Errorf("prefill.engine_args: %w", err)
		}
	case RoleDecode:
		p.markRole(st, "is_decode_only")
		stageconfig.MapDelete(st.Node, "input_connectors")
		if err := mergeEngineArgs(st, p.spec.Decode.EngineArgs); err != nil {
			return fmt.Errorf("decode.engine_args: %w", err)
		}
	default:
		if s.override != nil {
			if err := mergeEngineArgs(st, s.override.EngineArgs); err != nil {
				return fmt.Errorf("stage_overrides.%s.engine_args: %w", s.key, err)
			}
		}
	}
	if st.Dialect == stageconfig.StageArgs {
		p.writeInputs(st, s)
	}
	st.SetDevices(s.devices)
	if s.maxNumSeqs != nil {
		st.SetMaxNumSeqs(*s.maxNumSeqs)
	}
	if s.role == RoleStage {
		if s.override != nil && s.override.GPUMemoryUtilization != nil {
			st.SetEngine("gpu_memory_utilization", stageconfig.FloatNode(*s.override.GPUMemoryUtilization))
		}
		if s.override != nil && s.override.NumReplicas != nil {
			st.SetNumReplicas(*s.override.NumReplicas)
		}
		p.writeHostEnv(st, s)
		return nil
	}
	r := p.spec.Prefill
	if s.role == RoleDecode {
		r = p.spec.Decode
	}
	if r.GPUMemoryUtilization != nil {
		st.SetEngine("gpu_memory_utilization", stageconfig.FloatNode(*r.GPUMemoryUtilization))
	}
	st.SetEngine("tensor_parallel_size", stageconfig.IntNode(s.tp))
	if err := p.writeKVConfig(st, s); err != nil {
		return err
	}
	p.writeHostEnv(st, s)
	return nil
}

// markRole sets is_prefill_only / is_decode_only next to the stage's
// identity, where the recipe writes it. The `stages` dialect has no such
// keys: there the registered PD pipeline carries the roles.
func (p *planner) markRole(st stageconfig.Stage, key string) {
	if st.Dialect == stageconfig.Stages {
		return
	}
	stageconfig.MapInsertAfter(st.Node, key, stageconfig.BoolNode(true), "stage_type", "stage_id")
}

func mergeEngineArgs(st stageconfig.Stage, args map[string]any) error {
	for _, k := range sortedStrings(args) {
		if err := st.MergeEngine(k, args[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// writeInputs rewrites engine_input_source with the new ids, keeping the
// list's style; the decode stage gains one after its engine settings.
func (p *planner) writeInputs(st stageconfig.Stage, s *plannedStage) {
	old := st.Get("engine_input_source")
	if old == nil && len(s.inputs) == 0 {
		return
	}
	if len(s.inputs) == 0 {
		stageconfig.MapDelete(st.Node, "engine_input_source")
		return
	}
	n := stageconfig.FlowIntSeq(s.inputs)
	if old != nil && old.Kind == yaml.SequenceNode {
		n.Style = old.Style
	}
	stageconfig.MapInsertAfter(st.Node, "engine_input_source", n, "engine_args", "runtime")
}

// writeKVConfig writes kv_transfer_config for one side of the PD pair,
// keeping any keys the base already had there (kv_buffer_size, ...), and
// the environment the connector needs.
func (p *planner) writeKVConfig(st stageconfig.Stage, s *plannedStage) error {
	w := p.wiringFor(s)
	kvNode := st.Engine("kv_transfer_config")
	if kvNode == nil || kvNode.Kind != yaml.MappingNode {
		kvNode = stageconfig.NewMap()
		st.SetEngine("kv_transfer_config", kvNode)
	}
	for _, e := range w.kv {
		n, err := kvValueNode(e.value)
		if err != nil {
			return err
		}
		stageconfig.MapSet(kvNode, e.key, n)
	}
	if len(w.extra) > 0 {
		extraNode := stageconfig.MapEnsure(kvNode, "kv_connector_extra_config")
		for _, e := range w.extra {
			if err := stageconfig.MergeValue(extraNode, e.key, plainValue(e.value)); err != nil {
				return fmt.Errorf("connector.extra_config.%s: %w", e.key, err)
			}
		}
	}
	for _, e := range w.env {
		st.SetEnv(e.key, fmt.Sprint(e.value))
	}
	return nil
}

func kvValueNode(v any) (*yaml.Node, error) {
	if q, ok := v.(quoted); ok {
		return stageconfig.QuotedStrNode(string(q)), nil
	}
	return stageconfig.ValueNode(plainValue(v))
}

func plainValue(v any) any {
	switch x := v.(type) {
	case quoted:
		return string(x)
	case int:
		return int64(x)
	}
	return v
}

// writeHostEnv tells a stage's processes, across hosts, which address is
// theirs.
func (p *planner) writeHostEnv(st stageconfig.Stage, s *plannedStage) {
	if p.multiHost() {
		st.SetEnv("VLLM_HOST_IP", s.host)
	}
}

// renumberConnectors renames `from_stage_<n>` / `to_stage_<n>` keys after
// the split, so that connectors keep joining the same stages.
func (p *planner) renumberConnectors(doc *stageconfig.Document) {
	for _, st := range doc.Stages() {
		for _, c := range []struct{ key, prefix string }{{"input_connectors", "from_stage_"}, {"output_connectors", "to_stage_"}} {
			m := st.Get(c.key)
			if m == nil || m.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(m.Content); i += 2 {
				k := m.Content[i]
				old, ok := stageconfig.ConnectorStageID(k.Value, c.prefix)
				if !ok {
					continue
				}
				id := p.newID(old)
				if c.prefix == "to_stage_" && old == p.split.id {
					id = old // what fed the split stage now feeds prefill, which keeps its id
				}
				k.Value = fmt.Sprintf("%s%d", c.prefix, id)
			}
		}
	}
}

// writeEdges makes the edge list equal the planned input graph. Edges the
// base had keep their extra keys (window_size, ...); the new prefill →
// decode edge copies the extras of the edge that left the split stage.
func (p *planner) writeEdges(doc *stageconfig.Document) {
	k := p.split.id
	var container *yaml.Node
	if doc.Dialect == stageconfig.Stages {
		container = doc.Top()
	} else {
		container = stageconfig.MapGet(doc.Top(), "runtime")
		if container == nil || container.Kind != yaml.MappingNode {
			container = stageconfig.NewMap()
			stageconfig.MapSet(doc.Top(), "runtime", container)
		}
		if stageconfig.MapGet(container, "enabled") == nil {
			// A runtime section with edges is only read when enabled.
			container.Content = append([]*yaml.Node{stageconfig.KeyNode("enabled"), stageconfig.BoolNode(true)}, container.Content...)
		} else {
			stageconfig.MapSet(container, "enabled", stageconfig.BoolNode(true))
		}
	}
	old := stageconfig.MapGet(container, "edges")
	byEdge := map[Edge]*yaml.Node{}
	var template *yaml.Node
	if old != nil && old.Kind == yaml.SequenceNode {
		for _, n := range old.Content {
			from, ok1 := stageconfig.ScalarInt(stageconfig.MapGet(n, "from"))
			to, ok2 := stageconfig.ScalarInt(stageconfig.MapGet(n, "to"))
			if !ok1 || !ok2 {
				continue
			}
			e := Edge{From: p.newID(from), To: p.newID(to)}
			if to == k {
				e.To = k // the split stage's inputs now go to prefill
			}
			stageconfig.MapSet(n, "from", stageconfig.IntNode(e.From))
			stageconfig.MapSet(n, "to", stageconfig.IntNode(e.To))
			byEdge[e] = n
			if from == k && template == nil {
				template = n
			}
		}
	}
	seq := stageconfig.NewSeq()
	if old != nil {
		seq.HeadComment, seq.LineComment, seq.FootComment = old.HeadComment, old.LineComment, old.FootComment
	}
	var want []Edge
	for _, s := range p.stages {
		for _, in := range s.inputs {
			want = append(want, Edge{From: in, To: s.id})
		}
	}
	sortEdges(want)
	for _, e := range want {
		n, ok := byEdge[e]
		if !ok {
			n = stageconfig.NewMap()
			if template != nil {
				n = stageconfig.DeepCopy(template)
				n.HeadComment, n.LineComment, n.FootComment = "", "", ""
				for _, c := range n.Content {
					c.HeadComment, c.LineComment, c.FootComment = "", "", ""
				}
			}
			stageconfig.MapSet(n, "from", stageconfig.IntNode(e.From))
			stageconfig.MapSet(n, "to", stageconfig.IntNode(e.To))
		}
		seq.Content = append(seq.Content, n)
	}
	stageconfig.MapSet(container, "edges", seq)
}

// renumberPlatforms shifts `platforms.<name>.stages[].stage_id` like the
// stage list; an override of the split stage applies to both halves.
func (p *planner) renumberPlatforms(doc *stageconfig.Document, k int) {
	platforms := stageconfig.MapGet(doc.Top(), "platforms")
	for _, name := range stageconfig.MapKeys(platforms) {
		list := stageconfig.MapGet(stageconfig.MapGet(platforms, name), "stages")
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		var out []*yaml.Node
		for _, n := range list.Content {
			id, ok := stageconfig.ScalarInt(stageconfig.MapGet(n, "stage_id"))
			if !ok {
				out = append(out, n)
				continue
			}
			if id == k {
				if stageconfig.MapGet(n, "devices") != nil {
					p.ds.warnf(diagcode.PlatformDevicesKept, p.basePath, "a platform override places the split stage itself",
						"platforms.%s sets devices for stage %d; the provider plans devices for the default platform only, so prefill and decode both keep %s there. Give each its own devices in a base config written for that platform.", name, k, stageconfig.FormatDevices(mustDevices(stageconfig.MapGet(n, "devices"))))
				}
				dec := stageconfig.DeepCopy(n)
				dec.HeadComment = ""
				stageconfig.MapSet(dec, "stage_id", stageconfig.IntNode(k+1))
				out = append(out, n, dec)
				continue
			}
			stageconfig.MapSet(n, "stage_id", stageconfig.IntNode(p.newID(id)))
			out = append(out, n)
		}
		list.Content = out
	}
}

func mustDevices(n *yaml.Node) []int {
	devs, _ := stageconfig.ParseDevices(n)
	return devs
}
