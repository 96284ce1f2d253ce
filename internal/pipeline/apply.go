package pipeline

import (
	"fmt"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// apply writes the planned stages into a copy of the base config: the
// split stage becomes the prefill and decode stages, every later stage is
// renumbered, and each stage gets its devices and settings. Everything
// else in the base config is left as it was. Each stage of the copy is
// matched to its planned stage by id: SplitStage keeps the base's stages
// in their order with the split stage twice in its place, so a stage of
// the copy is a base stage whose id newID renumbers, or the first copy of
// the split stage (prefill's id) or the second (decode's). What the copy
// cannot hold (a connector name the base already uses, ...) and what the
// plan leaves as the base has it come back as problems, for Plan to
// report.
func (p *planner) apply() (*stageconfig.Document, Diagnostics, error) {
	var ds Diagnostics
	at := p.split.stage.Index
	doc := p.base.SplitStage(at)
	k := p.split.id
	for _, st := range doc.Stages() {
		var id int
		switch i := st.Index; {
		case i < at:
			id = p.newID(p.g.stages[i].id)
		case i == at:
			id = k
		case i == at+1:
			id = k + 1
		default:
			id = p.newID(p.g.stages[i-1].id)
		}
		s := p.planned.stageByID(id)
		if s == nil {
			return nil, nil, fmt.Errorf("%s is not among the planned stages", st.Describe())
		}
		st.SetID(s.id)
		if err := p.applyStage(st, s); err != nil {
			return nil, nil, err
		}
	}
	doc.RenumberConnectorKeys(k, p.newID)
	p.writeCrossHostConnectors(&ds, doc)
	doc.WriteEdges(p.planned.edges(), stageconfig.EdgeRewrite{
		Renumber: func(e Edge) Edge {
			out := Edge{From: p.newID(e.From), To: p.newID(e.To)}
			if e.To == k {
				out.To = k // the split stage's inputs now go to prefill
			}
			return out
		},
		// The new prefill → decode edge copies the extras of the edge
		// that left the split stage.
		Template: func(e Edge) bool { return e.From == k },
	})
	for _, pl := range doc.SplitPlatformStages(k, p.newID) {
		ds.warnf(diagcode.PlatformDevicesKept, p.basePath, "a platform override places the split stage itself",
			"platforms.%s sets devices for stage %d; the provider plans devices for the default platform only, so prefill and decode both keep %s there. Give each its own devices in a base config written for that platform.", pl.Platform, k, stageconfig.FormatDevices(pl.Devices))
	}
	return doc, ds, nil
}

func (p *planner) applyStage(st stageconfig.Stage, s *plannedStage) error {
	switch s.role {
	case RolePrefill:
		st.MarkPrefill()
		st.SetNotFinal()
		st.Delete("output_connectors")
		if err := mergeEngineArgs(st, p.spec.Prefill.EngineArgs); err != nil {
			return fmt.Errorf("prefill.engine_args: %w", err)
		}
	case RoleDecode:
		st.MarkDecode()
		st.Delete("input_connectors")
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
	st.SetInputs(s.inputs)
	st.SetDevices(s.devices)
	if s.maxNumSeqs != nil {
		st.SetMaxNumSeqs(*s.maxNumSeqs)
	}
	if s.role == RoleStage {
		if s.override != nil && s.override.GPUMemoryUtilization != nil {
			st.SetEngineFloat("gpu_memory_utilization", *s.override.GPUMemoryUtilization)
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
		st.SetEngineFloat("gpu_memory_utilization", *r.GPUMemoryUtilization)
	}
	st.SetEngineInt("tensor_parallel_size", s.par.tp)
	if err := p.writeKVConfig(st, s); err != nil {
		return err
	}
	p.writeHostEnv(st, s)
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
// the environment the connector needs.
func (p *planner) writeKVConfig(st stageconfig.Stage, s *plannedStage) error {
	w := p.wiringFor(s)
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
func (p *planner) writeHostEnv(st stageconfig.Stage, s *plannedStage) {
	if p.multiHost() {
		st.SetEnv("VLLM_HOST_IP", s.host)
	}
}
