package pipeline

import (
	"fmt"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// apply writes the planned stages into a copy of the base config: the
// split stage becomes the prefill and decode stages, every later stage is
// renumbered, and each stage gets its devices and settings, the PD pair
// its connector conn's (configured by c, on the planned ports). Everything
// else in the base config is left as it was. Each stage of the copy is
// matched to its planned stage by id: SplitStage keeps the base's stages
// in their order with the split stage twice in its place, so a stage of
// the copy is a base stage whose id newID renumbers, or the first copy of
// the split stage (prefill's id) or the second (decode's). What the copy
// cannot hold (a connector name the base already uses, ...) and what the
// plan leaves as the base has it come back as problems, for write to
// report.
func apply(c ConnectorSpec, base baseConfig, planned stageLayout, conn connector, ports portPlan) (*stageconfig.Document, Diagnostics, error) {
	var ds Diagnostics
	at := planned.split.stage.Index
	doc := base.doc.SplitStage(at)
	k := planned.split.id
	ctx := wireContext(c, planned, ports)
	for _, st := range doc.Stages() {
		var id int
		switch i := st.Index; {
		case i < at:
			id = planned.newID(base.g.stages[i].id)
		case i == at:
			id = k
		case i == at+1:
			id = k + 1
		default:
			id = planned.newID(base.g.stages[i-1].id)
		}
		s := planned.stageByID(id)
		if s == nil {
			return nil, nil, fmt.Errorf("%s is not among the planned stages", st.Describe())
		}
		st.SetID(s.id)
		var w kvconnector.Wiring
		if s.pd != nil {
			w = wiringFor(c, conn, ctx, s)
		}
		if err := applyStage(st, s, planned.multiHost(), w); err != nil {
			return nil, nil, err
		}
	}
	doc.RenumberConnectorKeys(k, planned.newID)
	writeCrossHostConnectors(&ds, doc, planned, ports.edges, c, base.path)
	doc.WriteEdges(planned.edges(), stageconfig.EdgeRewrite{
		Renumber: func(e Edge) Edge {
			out := Edge{From: planned.newID(e.From), To: planned.newID(e.To)}
			if e.To == k {
				out.To = k // the split stage's inputs now go to prefill
			}
			return out
		},
		// The new prefill → decode edge copies the extras of the edge
		// that left the split stage.
		Template: func(e Edge) bool { return e.From == k },
	})
	for _, pl := range doc.SplitPlatformStages(k, planned.newID) {
		ds.warnf(diagcode.PlatformDevicesKept, base.path, "a platform override places the split stage itself",
			"platforms.%s sets devices for stage %d; the provider plans devices for the default platform only, so prefill and decode both keep %s there. Give each its own devices in a base config written for that platform.", pl.Platform, k, stageconfig.FormatDevices(pl.Devices))
	}
	return doc, ds, nil
}

// applyStage writes the planned stage s into its stage of the copy: its
// role, the engine_args given it, its inputs, devices and settings, on the
// PD pair its connector wiring w, and across hosts (multiHost) the address
// that is its own.
func applyStage(st stageconfig.Stage, s *plannedStage, multiHost bool, w kvconnector.Wiring) error {
	switch s.role {
	case RolePrefill:
		st.MarkPrefill()
		st.SetNotFinal()
		st.Delete("output_connectors")
	case RoleDecode:
		st.MarkDecode()
		st.Delete("input_connectors")
	}
	if err := mergeEngineArgs(st, s.engineArgs()); err != nil {
		return fmt.Errorf("%s: %w", s.path.Attr("engine_args"), err)
	}
	st.SetInputs(s.inputs)
	st.SetDevices(s.devices)
	if s.maxNumSeqs != nil {
		st.SetMaxNumSeqs(*s.maxNumSeqs)
	}
	if s.pd == nil {
		if o := s.override; o != nil && o.GPUMemoryUtilization != nil {
			st.SetEngineFloat("gpu_memory_utilization", *o.GPUMemoryUtilization)
		}
		if o := s.override; o != nil && o.NumReplicas != nil {
			st.SetNumReplicas(*o.NumReplicas)
		}
		writeHostEnv(st, s, multiHost)
		return nil
	}
	if s.pd.GPUMemoryUtilization != nil {
		st.SetEngineFloat("gpu_memory_utilization", *s.pd.GPUMemoryUtilization)
	}
	st.SetEngineInt("tensor_parallel_size", s.par.tp)
	if err := writeKVConfig(st, w); err != nil {
		return err
	}
	writeHostEnv(st, s, multiHost)
	return nil
}

func mergeEngineArgs(st stageconfig.Stage, args map[string]any) error {
	for _, k := range sortedStrings(args) {
		if err := st.MergeEngine(k, args[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// writeKVConfig writes kv_transfer_config for one side of the PD pair,
// keeping any keys the base already had there (kv_buffer_size, ...), and
// the environment the connector needs: the side's wiring w.
func writeKVConfig(st stageconfig.Stage, w kvconnector.Wiring) error {
	entries := make([]stageconfig.KV, len(w.KV))
	for i, e := range w.KV {
		entries[i] = stageconfig.KV{Key: e.Key, Value: e.Value} // a quoted value stays in double quotes
	}
	if err := st.SetKVTransfer(entries); err != nil {
		return err
	}
	for _, e := range w.Extra {
		if err := st.MergeKVExtra(e.Key, plainValue(e.Value)); err != nil {
			return fmt.Errorf("connector.extra_config.%s: %w", e.Key, err)
		}
	}
	for _, e := range w.Env {
		st.SetEnv(e.Key, fmt.Sprint(e.Value))
	}
	return nil
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
func writeHostEnv(st stageconfig.Stage, s *plannedStage, multiHost bool) {
	if multiHost {
		st.SetEnv("VLLM_HOST_IP", s.host)
	}
}
