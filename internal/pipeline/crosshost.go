package pipeline

import (
	"fmt"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// crossHostEdges are the planned edges whose two stages run on different
// hosts, in edge order. An edge that names no connector gets vllm-omni's
// SharedMemoryConnector, which cannot leave its host, so each of these
// gets a named connector that can. The request path from the head to a
// stage on another host needs none: the head's omni master forwards
// requests over its own sockets (vllm_omni/engine/stage_engine_startup.py@0027c20a),
// and the entry stage takes its input from it.
func (l stageLayout) crossHostEdges() []Edge {
	var out []Edge
	for _, e := range l.edges() {
		if src, dst := l.stageByID(e.From), l.stageByID(e.To); src != nil && src.host != dst.host {
			out = append(out, e)
		}
	}
	return out
}

func (l stageLayout) stageByID(id int) *plannedStage {
	for _, s := range l.stages {
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
// input_connectors.from_stage_<n> on the receiver, with the sender's port
// of the edge (edgePorts) over the transport c names. A reference the base
// already had on such an edge is replaced, with a warning in ds at
// basePath.
func writeCrossHostConnectors(ds *Diagnostics, doc *stageconfig.Document, planned stageLayout, edgePorts map[Edge]int, c ConnectorSpec, basePath Path) {
	edges := planned.crossHostEdges()
	if len(edges) == 0 {
		return
	}
	where := doc.ConnectorsWhere()
	if bad := doc.EnsureConnectors(); bad != nil {
		if bad.Key == "runtime" {
			ds.errorf(diagcode.CrossHostConnectorsShape, basePath, "the base's runtime is not a mapping",
				"runtime (line %d) must be a mapping to hold the connectors of the edges between hosts; write it out as one.", bad.Line)
		} else {
			ds.errorf(diagcode.CrossHostConnectorsShape, basePath, "the base's connectors are not a mapping",
				"%s (line %d) must be a mapping of named connectors, written out (not an alias), to hold the connectors of the edges between hosts.", where, bad.Line)
		}
		return
	}
	stages := doc.Stages()
	for _, e := range edges {
		name := fmt.Sprintf("cross_host_%d_%d", e.From, e.To)
		if doc.HasConnector(name) {
			ds.errorf(diagcode.CrossHostConnectorNameTaken, basePath, "the base already defines a connector of this name",
				"%s.%s is the name the provider gives the connector of edge %d → %d, which crosses hosts; rename yours.", where, name, e.From, e.To)
			continue
		}
		if err := doc.DefineConnector(name, crossHostConnector(planned.stageByID(e.From).host, edgePorts[e], c)); err != nil {
			ds.errorf(diagcode.RenderFailed, nil, "the deploy config cannot be written", "%v", err)
			return
		}
		nameConnector(ds, basePath, stages, e.From, "output_connectors", fmt.Sprintf("to_stage_%d", e.To), name)
		nameConnector(ds, basePath, stages, e.To, "input_connectors", fmt.Sprintf("from_stage_%d", e.From), name)
	}
}

// crossHostConnector is the definition of the connector of one edge
// between hosts: the sender's address and port, over TCP or RDMA as c
// says.
func crossHostConnector(host string, port int, c ConnectorSpec) stageconfig.Map {
	protocol := "tcp"
	if c.Protocol == "rdma" {
		protocol = "rdma"
	}
	extra := stageconfig.Map{
		{Key: "host", Value: stageconfig.Quoted(host)},
		{Key: "zmq_port", Value: port},
		{Key: "protocol", Value: protocol},
	}
	if d := c.DeviceName; d != "" && protocol == "rdma" {
		extra = append(extra, stageconfig.KV{Key: "device_name", Value: d})
	}
	return stageconfig.Map{{Key: "name", Value: releases.CrossHostConnector}, {Key: "extra", Value: extra}}
}

// nameConnector names the connector name at the stage with id, under key
// as ref, with a warning at basePath where it replaces another.
func nameConnector(ds *Diagnostics, basePath Path, stages []stageconfig.Stage, id int, key, ref, name string) {
	for _, st := range stages {
		if sid, ok := st.ID(); !ok || sid != id {
			continue
		}
		if was, replaced := st.NameConnector(key, ref, name); replaced {
			ds.warnf(diagcode.CrossHostConnectorReplaced, basePath, "a connector on an edge between hosts was replaced",
				"stage %d's %s.%s named %q; the edge crosses hosts, so it now names %s (a %s).", id, key, ref, was, name, releases.CrossHostConnector)
		}
	}
}
