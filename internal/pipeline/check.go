package pipeline

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// checkGraph applies the rules vllm-omni enforces when it loads a config,
// plus the ones that otherwise fail only at run time, to a config as
// written. path is where the diagnostics point (base_config, or nothing for
// the validate function). placement adds the checks of the devices each
// stage runs on; the planner leaves it off because it places every stage
// itself and reports placement problems at the attributes that caused them.
func checkGraph(g *graph, ds *Diagnostics, path Path, placement bool) {
	checkInputs(g, ds, path)
	if g.doc.Dialect == stageconfig.StageArgs {
		checkEntryAndFinal(g, ds, path)
		checkEdgesMatchInputs(g, ds, path)
		checkModelStages(g, ds, path)
	}
	if g.doc.Dialect == stageconfig.Stages {
		// An edge from a stage that does not exist reads as an input from
		// it (checkInputs); one into such a stage reaches no stage.
		for _, e := range g.edges {
			if !g.hasStage(e.To) && g.hasStage(e.From) {
				edgeStageUnknown(g, ds, path, "edges", e)
			}
		}
	}
	checkConnectorRefs(g, ds, path)
	checkConfigPorts(g, ds, path)
	checkPDPair(g, ds, path, placement)
	if placement {
		checkWorldSizes(g, ds, path)
		checkSharedDevices(g, ds, path)
	}
}

func checkInputs(g *graph, ds *Diagnostics, path Path) {
	// Where the inputs are written: the stages dialect has them from the
	// stage's input_connectors and the edges.
	fix := "engine_input_source"
	if g.doc.Dialect == stageconfig.Stages {
		fix = "its input_connectors or the edges into it"
	}
	for _, s := range g.stages {
		for _, in := range s.inputs {
			switch {
			case s.hasID && in == s.id && g.stages[g.byID[s.id]].stage.Index == s.stage.Index:
				// (A stage whose id another stage has already taken is
				// reported as a duplicate, not as reading itself.)
				ds.errorf(diagcode.InputSelf, path, "a stage reads its own output",
					"%s lists itself in %s; list the stage it reads from.", s.stage.Describe(), fix)
			case !g.hasStage(in):
				ds.errorf(diagcode.InputUnknown, path, "a stage reads from a stage that does not exist",
					"%s reads from stage %d, which is not in the config; fix %s.", s.stage.Describe(), in, fix)
			}
		}
	}
	if c := g.findCycle(); c != nil {
		ds.errorf(diagcode.GraphCycle, path, "the stage graph has a cycle",
			"stages %s feed each other in a loop; every pipeline must flow from an entry stage to a final one: remove the engine_input_source entry that closes the loop.", describeIDs(c))
	}
}

func (g *graph) hasStage(id int) bool { _, ok := g.byID[id]; return ok }

func checkEntryAndFinal(g *graph, ds *Diagnostics, path Path) {
	entry, final := false, false
	for i, s := range g.stages {
		if len(s.inputs) == 0 {
			entry = true
			if i > 0 {
				warnNeverReached(g, ds, path, s)
			}
		}
		if s.final {
			final = true
		}
	}
	if len(g.stages) > 0 && !entry {
		ds.errorf(diagcode.NoEntryStage, path, "no stage takes the request",
			"every stage lists an engine_input_source, so none receives the prompt; remove the inputs of the first stage.")
	}
	if len(g.stages) > 0 && !final {
		ds.errorf(diagcode.NoFinalOutput, path, "no stage returns output",
			"set `final_output: true` (and final_output_type) on the stage whose output the API returns.")
	}
}

// warnNeverReached: vllm-omni's orchestrator puts every request on its
// first stage (stage_id = 0 in _handle_add_request, orchestrator.py
// @7f2b1e93:883-884, @2ce15ab7:635-637) and forwards a stage's output to
// the next one only (next_stage_id = stage_id + 1, @7f2b1e93:673,
// @2ce15ab7:1869). A later stage that reads from no stage is never where a
// request starts, and without an input function it raises on every output
// forwarded to it (stage_engine_core_client.py@7f2b1e93:385-386,
// @2ce15ab7:411-412), while it holds its GPUs.
func warnNeverReached(g *graph, ds *Diagnostics, path Path, s graphStage) {
	fails := ""
	if !s.stage.Sets("custom_process_input_func") {
		fails = ", and without engine_input_source or a custom_process_input_func it raises ValueError on each request forwarded to it (stage_engine_core_client.py@2ce15ab7:411-412)"
	}
	ds.warnf(diagcode.StageNeverReached, path, "a stage reads from no stage and never gets a request",
		"%s (line %d) reads from no stage, but vllm-omni sends every request to the first stage listed, %s (orchestrator.py@2ce15ab7:635-637), and hands each stage's output only to the stage after it (:1869): this stage never gets a request of its own%s, yet the plan gives it GPUs. List the stage it reads from in engine_input_source, or remove the stage.",
		s.stage.Describe(), s.stage.Line(), g.stages[0].stage.Describe(), fails)
}

// checkModelStages: the stage_args loader builds each stage's model from
// engine_args.model_stage; every upstream stage_args config sets it.
func checkModelStages(g *graph, ds *Diagnostics, path Path) {
	for _, s := range g.stages {
		if s.stage.ModelStage() == "" {
			ds.errorf(diagcode.ModelStageMissing, path, "a stage has no model_stage",
				"%s sets no engine_args.model_stage, which the stage_args loader needs to build its model; set it (thinker, talker, code2wav, ...).", s.stage.Describe())
		}
	}
}

func checkEdgesMatchInputs(g *graph, ds *Diagnostics, path Path) {
	if !g.hasEdges {
		return
	}
	want := map[Edge]bool{}
	for _, e := range g.inputEdges() {
		want[e] = true
	}
	have := map[Edge]bool{}
	for _, e := range g.edges {
		have[e] = true
		switch {
		case want[e]:
		case !g.hasStage(e.From) || !g.hasStage(e.To):
			edgeStageUnknown(g, ds, path, "runtime.edges", e)
		case e.From == e.To:
			ds.errorf(diagcode.EdgeSelf, path, "an edge leads from a stage to itself",
				"runtime.edges has %d → %d; a stage cannot read its own output: remove the edge.", e.From, e.To)
		default:
			ds.errorf(diagcode.EdgeNotInInputs, path, "an edge does not match the stages' inputs",
				"runtime.edges has %d → %d, but stage %d does not list %d in engine_input_source; make the edges and the inputs describe the same graph.", e.From, e.To, e.To, e.From)
		}
	}
	unreadable := g.doc.Edges().Unreadable
	for _, e := range g.inputEdges() {
		// An input from a stage that does not exist, or from the stage
		// itself, is checkInputs' error: no edge is to be added for it.
		if have[e] || !g.hasStage(e.From) || e.From == e.To {
			continue
		}
		hint := ""
		if len(unreadable) > 0 {
			hint = fmt.Sprintf(" (or fix the entry at line %d, if it is meant to be that edge)", unreadable[0])
		}
		ds.errorf(diagcode.EdgeMissing, path, "an input has no edge",
			"stage %d reads from stage %d but runtime.edges has no %d → %d edge; add it%s.", e.To, e.From, e.From, e.To, hint)
	}
}

// edgeStageUnknown reports an edge, listed under where, that names a stage
// the config does not have.
func edgeStageUnknown(g *graph, ds *Diagnostics, path Path, where string, e Edge) {
	missing := e.From
	if g.hasStage(e.From) {
		missing = e.To
	}
	ds.errorf(diagcode.EdgeStageUnknown, path, "an edge names a stage that does not exist",
		"%s has %d → %d, but there is no stage %d (the config has stages %s); fix the edge or remove it.", where, e.From, e.To, missing, describeInts(g.ids()))
}

// checkConnectorRefs makes sure every connector a stage names is defined,
// and that both ends of an edge agree on it.
func checkConnectorRefs(g *graph, ds *Diagnostics, path Path) {
	defined := definedConnectors(g.doc)
	out := map[Edge]string{}
	in := map[Edge]string{}
	for _, s := range g.stages {
		for _, dir := range []struct {
			key, prefix string
			into        map[Edge]string
			incoming    bool
		}{{"input_connectors", "from_stage_", in, true}, {"output_connectors", "to_stage_", out, false}} {
			for _, ref := range s.stage.ConnectorRefs(dir.key) {
				if ref.Inline {
					continue // an inline connector definition
				}
				k, name := ref.Key, ref.Name
				if defined != nil && !defined[name] {
					ds.errorf(diagcode.ConnectorUndefined, path, "a stage names a connector that is not defined",
						"%s: %s.%s names connector %q (line %d); define it under connectors or fix the name.", s.stage.Describe(), dir.key, k, name, ref.Line)
				}
				other, ok := stageconfig.ConnectorStageID(k, dir.prefix)
				if !ok {
					continue
				}
				e := Edge{From: s.id, To: other}
				if dir.incoming {
					e = Edge{From: other, To: s.id}
				}
				dir.into[e] = name
			}
		}
	}
	// In edge order: a map's order would change the problems' order from
	// one call to the next.
	edges := make([]Edge, 0, len(out))
	for e := range out {
		edges = append(edges, e)
	}
	sortEdges(edges)
	for _, e := range edges {
		a := out[e]
		if b, ok := in[e]; ok && a != b {
			ds.errorf(diagcode.ConnectorConflict, path, "the two ends of an edge use different connectors",
				"edge %d → %d: stage %d sends with %q but stage %d receives with %q; use one connector.", e.From, e.To, e.From, a, e.To, b)
		}
	}
}

// definedConnectors returns the connector names the config defines, or nil
// when it defines none at all (then references are resolved elsewhere).
func definedConnectors(doc *stageconfig.Document) map[string]bool {
	names, defined := doc.ConnectorNames()
	if !defined {
		return nil
	}
	out := map[string]bool{}
	for _, k := range names {
		out[k] = true
	}
	return out
}

func engineInt(s stageconfig.Stage, key string, def int) int {
	if v, ok := s.EngineInt(key); ok {
		return v
	}
	return def
}

func checkWorldSizes(g *graph, ds *Diagnostics, path Path) {
	for _, s := range g.stages {
		if s.devicesErr != nil {
			ds.errorf(diagcode.DevicesInvalid, path, "a stage's devices cannot be read", "%s: %v", s.stage.Describe(), s.devicesErr)
			continue
		}
		if !s.hasDevices {
			continue
		}
		devs, x := s.devices, baseParallel(s.stage)
		if s.stageType == "llm" && len(devs) != x.world() {
			ds.errorf(diagcode.DevicesWorldSize, path, "a stage's device count does not match its parallelism",
				"%s runs on %d device(s) (%s) but %s needs %s; list %s or change the parallel sizes.",
				s.stage.Describe(), len(devs), stageconfig.FormatDevices(devs), x, x.needs(), x.needs())
		}
	}
}

// checkPDPair checks the config's PD pair, if it has one: one prefill
// stage and one decode stage reading from it, whose kv_transfer_configs
// agree and whose connector takes their sizes (and, with placement, their
// devices).
func checkPDPair(g *graph, ds *Diagnostics, path Path, placement bool) {
	p, d, ok := pdPairOf(g, ds, path)
	if !ok {
		return
	}
	if g.doc.Dialect == stageconfig.StageArgs && !containsInt(d.inputs, p.id) {
		ds.errorf(diagcode.PDDecodeInput, path, "the decode stage does not read from the prefill stage",
			"%s must list %d in engine_input_source.", d.stage.Describe(), p.id)
	}
	class, ok := checkKVTransfer(p, d, ds, path)
	if !ok {
		return
	}
	ptp, dtp := baseParallel(p.stage).tp, baseParallel(d.stage).tp
	if msg := tpProblem(class, ptp, dtp); msg != "" {
		ds.errorf(diagcode.TPMismatch, path, "prefill and decode tensor_parallel_size do not fit the connector", "%s", msg)
	}
	if placement {
		checkPDDevices(p, d, ds, path)
	}
	checkConnectorPair(p, d, class, ds, path)
}

// pdPairOf finds the config's prefill and decode stage. ok is false when
// it has no pair, or a stage of one without the other, or several (each
// but the first reported).
func pdPairOf(g *graph, ds *Diagnostics, path Path) (p, d graphStage, ok bool) {
	var ps, dsg []graphStage
	for _, s := range g.stages {
		if s.prefill {
			ps = append(ps, s)
		}
		if s.decode {
			dsg = append(dsg, s)
		}
	}
	switch {
	case len(ps) > 1 || len(dsg) > 1:
		ds.errorf(diagcode.PDMultiplePairs, path, "more than one prefill/decode pair",
			"vllm-omni supports one PD pair per pipeline; found %d prefill and %d decode stages. Run more pipelines (or num_replicas) for more capacity.", len(ps), len(dsg))
	case len(ps) == 0 && len(dsg) == 0:
	case len(ps) == 1 && len(dsg) == 0:
		ds.errorf(diagcode.PDPrefillAlone, path, "a prefill stage has no decode partner",
			"%s is prefill-only but no stage is decode-only, so PD is silently off; mark its partner `is_decode_only: true`.", ps[0].stage.Describe())
	case len(ps) == 0:
		ds.errorf(diagcode.PDDecodeAlone, path, "a decode stage has no prefill partner",
			"%s is decode-only but no stage is prefill-only; mark its partner `is_prefill_only: true`.", dsg[0].stage.Describe())
	default:
		return ps[0], dsg[0], true
	}
	return graphStage{}, graphStage{}, false
}

// checkKVTransfer checks the pair's kv_transfer_configs: each there, the
// roles that fit each side, one connector (its class returned) and one
// buffer. ok is false when a side has none to read.
func checkKVTransfer(p, d graphStage, ds *Diagnostics, path Path) (class string, ok bool) {
	pkv, pok := p.stage.KVTransfer()
	dkv, dok := d.stage.KVTransfer()
	for _, x := range []struct {
		s  graphStage
		ok bool
	}{{p, pok}, {d, dok}} {
		if !x.ok {
			what := "is missing"
			if x.s.stage.HasEngine("kv_transfer_config") {
				what = "is not a mapping"
			}
			ds.errorf(diagcode.KVConfigMissing, path, "kv_transfer_config "+what,
				"%s needs a kv_transfer_config with kv_connector, kv_role, kv_rank and kv_parallel_size.", x.s.stage.Describe())
		}
	}
	if !pok || !dok {
		return "", false
	}
	if pkv.Role != kvProducer && pkv.Role != "kv_both" {
		ds.errorf(diagcode.KVRolePrefill, path, "the prefill stage does not produce KV",
			"%s has kv_role %q; use kv_producer (or kv_both).", p.stage.Describe(), pkv.Role)
	}
	if dkv.Role != kvConsumer && dkv.Role != "kv_both" {
		ds.errorf(diagcode.KVRoleDecode, path, "the decode stage does not consume KV",
			"%s has kv_role %q; use kv_consumer (or kv_both).", d.stage.Describe(), dkv.Role)
	}
	switch {
	case pkv.Connector == "" || dkv.Connector == "":
		ds.errorf(diagcode.KVConnectorEmpty, path, "kv_connector is empty", "set the same kv_connector on both %s and %s.", p.stage.Describe(), d.stage.Describe())
	case pkv.Connector != dkv.Connector:
		ds.errorf(diagcode.KVConnectorMismatch, path, "prefill and decode use different KV connectors",
			"%s uses %q and %s uses %q; use one connector on both.", p.stage.Describe(), pkv.Connector, d.stage.Describe(), dkv.Connector)
	}
	if pkv.BufferDevice != "" && dkv.BufferDevice != "" && pkv.BufferDevice != dkv.BufferDevice {
		ds.errorf(diagcode.KVBufferDeviceMismatch, path, "kv_buffer_device differs", "prefill has %q and decode %q; set the same on both.", pkv.BufferDevice, dkv.BufferDevice)
	}
	if pkv.BufferSize != "" && dkv.BufferSize != "" && pkv.BufferSize != dkv.BufferSize {
		ds.errorf(diagcode.KVBufferSizeMismatch, path, "kv_buffer_size differs", "prefill has %s and decode %s; set the same on both.", pkv.BufferSize, dkv.BufferSize)
	}
	return pkv.Connector, true
}

// tpProblem says why a prefill/decode tensor-parallel pair does not start,
// or returns "". vllm-omni's PD validator demands equal sizes whatever the
// connector, NIXL included (releases.CheckEqualTP); the planner and the
// config checks share this rule.
func tpProblem(class string, prefill, decode int) string {
	if prefill == decode {
		return ""
	}
	return fmt.Sprintf("vllm-omni refuses different tensor_parallel_size on prefill (%d) and decode (%d) with every connector, %s too (vLLM alone would let NIXL decode run more); set both to the same value.", prefill, decode, class)
}

func checkPDDevices(p, d graphStage, ds *Diagnostics, path Path) {
	if !p.hasDevices || !d.hasDevices || p.host != d.host {
		return // devices are indices into each host's own GPUs; no address on either means one host
	}
	if shared := intersect(p.devices, d.devices); len(shared) > 0 {
		ds.errorf(diagcode.PDDevicesOverlap, path, "prefill and decode share GPUs",
			"%s and %s both use device(s) %s; give each its own devices.", p.stage.Describe(), d.stage.Describe(), stageconfig.FormatDevices(shared))
	}
}

// checkConnectorPair runs the checks the pair's connector entry makes of a
// config (kvconnector.Entry.CheckPair: Mooncake's bootstrap port).
func checkConnectorPair(p, d graphStage, class string, ds *Diagnostics, path Path) {
	e, ok := kvconnector.Lookup(class)
	if !ok || e.CheckPair == nil {
		return
	}
	for _, f := range e.CheckPair(configSide(p), configSide(d)) {
		ds.errorf(f.Code, path, f.Summary, "%s", f.Detail)
	}
}

// configSide is what an entry's CheckPair reads of one side of a config.
func configSide(s graphStage) kvconnector.ConfigSide {
	extra := s.stage.KVTransferSettings().Get("kv_connector_extra_config")
	return kvconnector.ConfigSide{Describe: s.stage.Describe(), Host: s.host, ExtraInt: extra.Int, Env: s.stage.EnvVar}
}

// checkSharedDevices adds up gpu_memory_utilization of the stages that share
// a device: over 1.0 cannot start; close to it leaves no headroom.
func checkSharedDevices(g *graph, ds *Diagnostics, path Path) {
	type share struct {
		total  float64
		stages []string
	}
	byDevice := map[string]*share{}
	var order []string
	for _, s := range g.stages {
		if !s.hasDevices || s.devicesErr != nil {
			continue
		}
		mem, known := memoryShare(s.stage)
		if !known {
			continue
		}
		for _, dev := range s.devices {
			key := fmt.Sprintf("%s/%d", s.host, dev)
			sh := byDevice[key]
			if sh == nil {
				sh = &share{}
				byDevice[key] = sh
				order = append(order, key)
			}
			sh.total += mem
			sh.stages = append(sh.stages, fmt.Sprintf("%s %.2f", s.stage.Describe(), mem))
		}
	}
	for _, key := range order {
		reportShare(ds, path, key, byDevice[key].total, byDevice[key].stages)
	}
}

func reportShare(ds *Diagnostics, path Path, device string, total float64, stages []string) {
	if len(stages) < 2 {
		return
	}
	dev := device[strings.IndexByte(device, '/')+1:]
	list := strings.Join(stages, ", ")
	switch {
	case total > 1.0+1e-9:
		ds.errorf(diagcode.GPUMemoryOversubscribed, path, "stages sharing a GPU ask for more than all of its memory",
			"device %s: %s add up to %.2f of its memory; lower gpu_memory_utilization so the sum is at most 1.0, or move a stage to another device.", dev, list, total)
	case total > sharedDeviceHeadroom+1e-9:
		ds.warnf(diagcode.GPUMemoryTight, path, "stages sharing a GPU leave little memory headroom",
			"device %s: %s add up to %.2f; above %.2f, activation peaks can run it out of memory. Lower one of them.", dev, list, total, sharedDeviceHeadroom)
	}
}

func containsInt(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if containsInt(b, x) && !containsInt(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// memoryShare is the share of a GPU's memory a stage takes. An LLM stage in
// the stage_args dialect that sets none takes vLLM's default; elsewhere the
// default belongs to vllm-omni's stage classes and is not known here, so
// such a stage is left out of the sums.
func memoryShare(s stageconfig.Stage) (float64, bool) {
	if v, ok := s.EngineFloat("gpu_memory_utilization"); ok {
		return v, true
	}
	if s.Dialect == stageconfig.StageArgs && s.StageType() == "llm" {
		return defaultGPUMemoryShare, true
	}
	return 0, false
}
