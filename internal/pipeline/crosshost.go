package pipeline

import (
	"fmt"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
	"go.yaml.in/yaml/v3"
)

// crossHostEdges are the planned edges whose two stages run on different
// hosts, in edge order. An edge that names no connector gets vllm-omni's
// SharedMemoryConnector, which cannot leave its host, so each of these
// gets a named connector that can. The request path from the head to a
// stage on another host needs none: the head's omni master forwards
// requests over its own sockets (vllm_omni/engine/stage_engine_startup.py@0027c20a),
// and the entry stage takes its input from it.
func (p *planner) crossHostEdges() []Edge {
	var out []Edge
	for _, s := range p.stages {
		for _, in := range s.inputs {
			if src := p.stageByID(in); src != nil && src.host != s.host {
				out = append(out, Edge{From: in, To: s.id})
			}
		}
	}
	sortEdges(out)
	return out
}

func (p *planner) stageByID(id int) *plannedStage {
	for _, s := range p.stages {
		if s.id == id {
			return s
		}
	}
	return nil
}

// writeCrossHostConnectors defines one MooncakeTransferEngineConnector per
// edge between hosts, as upstream's multi-node PD config does
// (vllm_omni/deploy/hunyuan_image_3_moe_pd.yaml@c9899cfe), and names it at
// both ends: output_connectors.to_stage_<n> on the sender,
// input_connectors.from_stage_<n> on the receiver. A reference the base
// already had on such an edge is replaced, with a warning.
func (p *planner) writeCrossHostConnectors(doc *stageconfig.Document) {
	edges := p.crossHostEdges()
	if len(edges) == 0 {
		return
	}
	container := doc.Top()
	where := "connectors"
	if doc.Dialect == stageconfig.StageArgs {
		where = "runtime.connectors"
		if rt := stageconfig.MapGet(doc.Top(), "runtime"); rt != nil && rt.Kind != yaml.MappingNode {
			p.ds.errorf(diagcode.CrossHostConnectorsShape, p.basePath, "the base's runtime is not a mapping",
				"runtime (line %d) must be a mapping to hold the connectors of the edges between hosts; write it out as one.", rt.Line)
			return
		}
		container = stageconfig.MapEnsure(doc.Top(), "runtime")
	}
	if defs := stageconfig.MapGet(container, "connectors"); defs != nil && defs.Kind != yaml.MappingNode {
		p.ds.errorf(diagcode.CrossHostConnectorsShape, p.basePath, "the base's connectors are not a mapping",
			"%s (line %d) must be a mapping of named connectors, written out (not an alias), to hold the connectors of the edges between hosts.", where, defs.Line)
		return
	}
	defs := stageconfig.MapEnsure(container, "connectors")
	nodes := doc.Stages()
	for _, e := range edges {
		name := fmt.Sprintf("cross_host_%d_%d", e.From, e.To)
		if stageconfig.MapGet(defs, name) != nil {
			p.ds.errorf(diagcode.CrossHostConnectorNameTaken, p.basePath, "the base already defines a connector of this name",
				"%s.%s is the name the provider gives the connector of edge %d → %d, which crosses hosts; rename yours.", where, name, e.From, e.To)
			continue
		}
		src := p.stageByID(e.From)
		extra := stageconfig.NewMap()
		stageconfig.MapSet(extra, "host", stageconfig.QuotedStrNode(src.host))
		stageconfig.MapSet(extra, "zmq_port", stageconfig.IntNode(p.edgePorts[e]))
		protocol := "tcp"
		if p.spec.Connector.Protocol == "rdma" {
			protocol = "rdma"
		}
		stageconfig.MapSet(extra, "protocol", stageconfig.StrNode(protocol))
		if d := p.spec.Connector.DeviceName; d != "" && protocol == "rdma" {
			stageconfig.MapSet(extra, "device_name", stageconfig.StrNode(d))
		}
		def := stageconfig.NewMap()
		stageconfig.MapSet(def, "name", stageconfig.StrNode(releases.CrossHostConnector))
		stageconfig.MapSet(def, "extra", extra)
		stageconfig.MapSet(defs, name, def)
		p.nameConnector(nodes, e.From, "output_connectors", fmt.Sprintf("to_stage_%d", e.To), name)
		p.nameConnector(nodes, e.To, "input_connectors", fmt.Sprintf("from_stage_%d", e.From), name)
	}
}

func (p *planner) nameConnector(stages []stageconfig.Stage, id int, key, ref, name string) {
	for _, st := range stages {
		if sid, ok := st.ID(); !ok || sid != id {
			continue
		}
		m := st.Get(key)
		if m == nil || m.Kind != yaml.MappingNode {
			m = stageconfig.NewMap()
			stageconfig.MapInsertAfter(st.Node, key, m, "engine_input_source", "engine_args", "runtime")
		}
		if old := stageconfig.MapGet(m, ref); old != nil {
			was, _ := stageconfig.ScalarString(old)
			p.ds.warnf(diagcode.CrossHostConnectorReplaced, p.basePath, "a connector on an edge between hosts was replaced",
				"stage %d's %s.%s named %q; the edge crosses hosts, so it now names %s (a %s).", id, key, ref, was, name, releases.CrossHostConnector)
		}
		stageconfig.MapSet(m, ref, stageconfig.StrNode(name))
	}
}
