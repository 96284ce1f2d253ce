package pipeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// plannedStage is one stage of the output pipeline and every choice the
// planner makes for it.
type plannedStage struct {
	key       string // prefill, decode, or the stage_overrides name (stageKey.override)
	deviceKey string // the stage's name in Allocations.Devices (stageKey.device)
	role      string
	base      graphStage // the base stage it comes from
	id        int
	inputs    []int
	host      string
	path      Path // where the user configures it
	// pd is the prefill or decode attribute a side of the PD pair is
	// configured by, override the stage_overrides entry of another stage;
	// nil where there is none.
	pd       *RoleSpec
	override *StageOverride

	// givenDevices are the devices the user lists for the stage
	// (devicesGiven, even when the list is empty); devices are the ones it
	// runs on, set by assemble from the placement.
	givenDevices []int
	devicesGiven bool
	devices      []int
	par          parallel // tensor, pipeline and data parallel sizes and replicas: par.world() devices
	memory       float64
	maxNumSeqs   *int

	kvRole        *string
	kvRank        int
	handshakePort int            // the port the peer dials (Mooncake bootstrap, NIXL side channel, ...); 0 if none
	ports         map[string]int // connector ports by suffix (_bootstrap, _side_channel, ...)
}

func (s *plannedStage) info() StageInfo {
	info := StageInfo{
		StageID:            s.id,
		Role:               s.role,
		ModelStage:         s.base.modelStage,
		Devices:            s.devices,
		TensorParallelSize: s.par.tp,
		Inputs:             s.inputs,
		KVRole:             s.kvRole,
		Host:               s.host,
		FinalOutput:        s.base.final && s.role != RolePrefill,
	}
	if s.handshakePort != 0 {
		port := s.handshakePort
		info.BootstrapPort = &port
	}
	return info
}

// settings are a side of the PD pair's planned settings.
func (s *plannedStage) settings() RoleSettings {
	r := RoleSettings{Devices: s.devices, TensorParallelSize: s.par.tp, BootstrapPort: s.info().BootstrapPort}
	if s.maxNumSeqs != nil {
		r.MaxNumSeqs = *s.maxNumSeqs
	}
	return r
}

// describe names the stage in messages: "prefill (stage 0)".
func (s *plannedStage) describe() string {
	if s.role == RoleStage {
		return fmt.Sprintf("%s (stage %d)", s.key, s.id)
	}
	return fmt.Sprintf("%s (stage %d)", s.role, s.id)
}

// engineArgs are the engine_args the user gives the stage, merged over
// its base stage's: its side's or its override's.
func (s *plannedStage) engineArgs() map[string]any {
	switch {
	case s.pd != nil:
		return s.pd.EngineArgs
	case s.override != nil:
		return s.override.EngineArgs
	}
	return nil
}

// ids lists the graph's stage ids, sorted.
func (g *graph) ids() []int {
	ids := make([]int, 0, len(g.stages))
	for _, s := range g.stages {
		ids = append(ids, s.id)
	}
	sort.Ints(ids)
	return ids
}

// stageLayout is what layout decides: the stage split into the PD pair,
// and the output stages, in output order, with their ids, inputs, hosts
// and the settings each takes from the user (the devices it lists among
// them), and their hosts. The devices the stages run on and the pair's
// ports are chosen after it, by place and allocatePorts; assemble puts
// them on copies of these stages.
type stageLayout struct {
	split  graphStage // the base stage split into prefill and decode
	stages []*plannedStage
	hosts  []string // distinct, in stage order
}

// newID maps a base stage id to its id after the split; a reference to the
// split stage itself means the decode stage, which now produces its output.
func (l stageLayout) newID(old int) int {
	if old >= l.split.id {
		return old + 1
	}
	return old
}

// layout builds the output stages of the base graph g split at split, in
// output order: ids, inputs, hosts and the settings each one takes from
// the inputs. It reports nothing; checkLayout judges what it returns.
func layout(spec Spec, g *graph, split graphStage) stageLayout {
	lay := stageLayout{split: split, stages: make([]*plannedStage, 0, len(g.stages)+1)}
	k := split.id
	var pre, dec *plannedStage
	for _, s := range g.stages {
		if s.id == k {
			pre = &plannedStage{role: RolePrefill, base: s, id: k, path: AttrPath(prefillKey)}
			for _, in := range s.inputs {
				pre.inputs = append(pre.inputs, lay.newID(in))
			}
			dec = &plannedStage{role: RoleDecode, base: s, id: k + 1, inputs: []int{k}, path: AttrPath(decodeKey)}
			lay.stages = append(lay.stages, pre, dec)
			continue
		}
		ps := &plannedStage{role: RoleStage, base: s, id: lay.newID(s.id)}
		for _, in := range s.inputs {
			ps.inputs = append(ps.inputs, lay.newID(in))
		}
		lay.stages = append(lay.stages, ps)
	}
	nameStages(lay.stages)
	preRole, decRole := kvRoles(spec.Connector.KVBoth)
	configureRole(pre, spec.Prefill, DefaultPrefillMaxSeqs, preRole, 0)
	configureRole(dec, spec.Decode, DefaultDecodeMaxSeqs, decRole, 1)
	for _, s := range lay.stages {
		if s.role == RoleStage {
			if o, ok := spec.StageOverrides[s.key]; ok {
				s.override = &o
			}
			s.path = AttrPath("stage_overrides", s.key)
			configureStage(s)
		}
	}
	// Hosts: the decode side defaults to the prefill host, and the other
	// stages to the decode host, since they consume what decode produces.
	pre.host = hostOrCanonical(spec.Prefill.Host)
	dec.host = firstNonEmpty(hostOrCanonical(spec.Decode.Host), pre.host)
	for _, s := range lay.stages {
		if s.role == RoleStage {
			h := ""
			if s.override != nil {
				h = hostOrCanonical(s.override.Host)
			}
			s.host = firstNonEmpty(h, dec.host)
		}
	}
	lay.hosts = stageHosts(lay.stages)
	return lay
}

// nameStages gives each stage its stage_overrides key and its key in
// Allocations.Devices (stageKeys).
func nameStages(stages []*plannedStage) {
	infos := make([]StageInfo, len(stages))
	for i, s := range stages {
		infos[i] = StageInfo{StageID: s.id, Role: s.role, ModelStage: s.base.modelStage}
	}
	for i, key := range stageKeys(infos) {
		stages[i].key, stages[i].deviceKey = key.override, key.device
	}
}

// edges are the edges of the planned input graph, sorted.
func (l stageLayout) edges() []Edge {
	var want []Edge
	for _, s := range l.stages {
		for _, in := range s.inputs {
			want = append(want, Edge{From: in, To: s.id})
		}
	}
	sortEdges(want)
	return want
}

// stageHosts are the planned stages' distinct hosts, in stage order.
func stageHosts(stages []*plannedStage) []string {
	var hosts []string
	for _, s := range stages {
		if !containsString(hosts, s.host) {
			hosts = append(hosts, s.host)
		}
	}
	return hosts
}

// pdPair is the prefill and the decode stage among the stages.
func (l stageLayout) pdPair() (pre, dec *plannedStage) {
	for _, s := range l.stages {
		switch s.role {
		case RolePrefill:
			pre = s
		case RoleDecode:
			dec = s
		}
	}
	return pre, dec
}

// checkLayout reports what the layout leaves unplanned or cannot run, in
// stage order: stage_overrides entries that address no stage, engine_args
// parallel sizes that are not whole numbers (the layout keeps the config's
// size for them), and a PD pair whose tensor-parallel sizes the connector
// refuses.
func checkLayout(lay stageLayout, overrides map[string]StageOverride, conn connector, ds *Diagnostics) {
	checkOverrideKeys(lay, overrides, ds)
	var pre *plannedStage
	for _, s := range lay.stages {
		if s.pd != nil || s.override != nil {
			checkParallelArgs(ds, s.path, s.engineArgs())
		}
		switch s.role {
		case RolePrefill:
			pre = s
		case RoleDecode:
			// A size below 1 is checkSpec's range error, not a mismatch.
			if msg := tpProblem(conn.name(), pre.par.tp, s.par.tp); msg != "" && pre.par.tp >= 1 && s.par.tp >= 1 {
				ds.errorf(diagcode.TPMismatch, AttrPath(decodeKey, "tensor_parallel_size"), "prefill and decode tensor_parallel_size do not fit the connector", "%s", msg)
			}
		}
	}
}

// checkOverrideKeys reports the stage_overrides entries that address no
// stage of the layout, or its split stage, or a model_stage several stages
// share.
func checkOverrideKeys(lay stageLayout, overrides map[string]StageOverride, ds *Diagnostics) {
	for _, name := range sortedStrings(overrides) {
		if h := overrides[name].Host; h != "" {
			checkHost(ds, AttrPath("stage_overrides", name, "host"), h)
		}
	}
	known := map[string]bool{}
	var names []string
	shared := map[string][]string{}
	for _, s := range lay.stages {
		if s.role != RoleStage {
			continue
		}
		known[s.key] = true
		names = append(names, s.key)
		if ms := s.base.modelStage; s.key != ms && ms != "" {
			shared[ms] = append(shared[ms], s.key)
		}
	}
	for _, name := range sortedStrings(overrides) {
		path := AttrPath("stage_overrides", name)
		switch {
		case len(shared[name]) > 1:
			ds.errorf(diagcode.OverrideAmbiguous, path, "several stages have this model_stage",
				"%s is the model_stage of %s; use their ids in the base config as keys instead: %s.", name, strings.Join(shared[name], " and "), strings.Join(shared[name], ", "))
		case name == lay.split.modelStage || name == prefillKey || name == decodeKey:
			ds.errorf(diagcode.OverrideSplitStage, path, "the split stage is configured through prefill and decode",
				"move these settings to the prefill and decode attributes.")
		case !known[name]:
			ds.errorf(diagcode.OverrideUnknownStage, path, "no stage has this model_stage",
				"use one of the stages that can be overridden: %s.", strings.Join(names, ", "))
		}
	}
}

// configureRole gives a side of the PD pair the settings of its attribute
// r, over the split stage's own.
func configureRole(s *plannedStage, r RoleSpec, defaultSeqs int, role string, rank int) {
	s.pd = &r
	// Unset, both sides keep the split stage's own tensor_parallel_size.
	// Pipeline and data parallel sizes come from its engine args over the
	// base's, as the merge into the config will write them.
	s.par = baseParallel(s.base.stage).withEngineArgs(r.EngineArgs)
	s.par.tp = engineInt(s.base.stage, "tensor_parallel_size", DefaultTensorParallel)
	if r.TensorParallelSize != nil {
		s.par.tp = *r.TensorParallelSize
	}
	if r.Devices != nil {
		s.givenDevices, s.devicesGiven = r.Devices, true
	}
	seqs := defaultSeqs
	if r.MaxNumSeqs != nil {
		seqs = *r.MaxNumSeqs
	}
	s.maxNumSeqs = &seqs
	s.memory = baseMemory(s.base.stage)
	if r.GPUMemoryUtilization != nil {
		s.memory = *r.GPUMemoryUtilization
	}
	kvRole := role
	s.kvRole, s.kvRank = &kvRole, rank
}

// configureStage gives a stage outside the pair the settings of its
// override, over its base stage's own.
func configureStage(s *plannedStage) {
	s.memory = baseMemory(s.base.stage)
	o := s.override
	if o == nil {
		s.par = baseParallel(s.base.stage)
		return
	}
	s.par = baseParallel(s.base.stage).withEngineArgs(o.EngineArgs)
	if o.NumReplicas != nil && *o.NumReplicas >= 1 {
		s.par.replicas = *o.NumReplicas
	}
	if o.Devices != nil {
		s.givenDevices, s.devicesGiven = o.Devices, true
	}
	s.maxNumSeqs = o.MaxNumSeqs
	if o.GPUMemoryUtilization != nil {
		s.memory = *o.GPUMemoryUtilization
	}
}

func baseMemory(s stageconfig.Stage) float64 {
	if v, ok := s.EngineFloat("gpu_memory_utilization"); ok {
		return v
	}
	return defaultGPUMemoryShare
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func containsString(xs []string, v string) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// head is the host of the first stage, which serves the API.
func (l stageLayout) head() string { return l.stages[0].host }

func (l stageLayout) multiHost() bool { return len(l.hosts) > 1 }

// stageBasedLaunch reports whether each stage of the layout runs as its
// own process with vllm-omni's stage-based launch of release r: across
// hosts, and on one host when r does not carry each stage's runtime.env
// to its engine in a whole-pipeline process. Every connector the provider
// wires gives the PD pair per-stage variables (NIXL's side-channel port
// differs between prefill and decode), and two stages in one process share
// one environment, so there each stage's variables reach it only as its
// own process's environment.
func stageBasedLaunch(lay stageLayout, r releases.Release) bool {
	return lay.multiHost() || !r.StageEnv.Applied
}

// checkIgnoredInputs warns of settings the launch leaves without effect,
// so that none is dropped without a word. (Settings that contradict
// another, such as pipeline with stage_args output, are errors where they
// are read.)
func checkIgnoredInputs(svc ServiceSpec, r releases.Release, stageBased bool, ds *Diagnostics) {
	if svc.HeadWaitSeconds != nil && !stageBased {
		ds.warnf(diagcode.HeadWaitUnused, AttrPath("systemd", "head_wait_seconds"), "head_wait_seconds has no effect on this launch",
			"only a headless process waits for the head, and vllm-omni %s runs every stage of this one-host plan in one process; remove head_wait_seconds, or give stages their hosts.", r.Version)
	}
}

// checkHosts rejects, across hosts, addresses the other side cannot reach.
func checkHosts(lay stageLayout, ds *Diagnostics) {
	if !lay.multiHost() {
		return
	}
	// Hosts that are not addresses are checkHost's errors; where no stage
	// has a usable one, the stages without a host are not the cause.
	usable := false
	for _, h := range lay.hosts {
		if _, why := canonicalHost(h); h != "" && why == "" {
			usable = true
		}
	}
	for _, s := range lay.stages {
		if s.host == "" {
			if usable {
				ds.errorf(diagcode.HostMissing, s.path.Attr("host"), "a stage has no host while others do",
					"%s has no host but the pipeline spans %d hosts; set its host.", s.describe(), len(lay.hosts))
			}
			continue
		}
		explicit := s.role != RoleStage || s.override != nil && s.override.Host != ""
		if explicit {
			checkReachable(s, ds)
		}
	}
}

// checkReachable refuses a host the user gave a stage that the stages on
// other hosts cannot reach it at.
func checkReachable(s *plannedStage, ds *Diagnostics) {
	if isLoopback(s.host) {
		ds.errorf(diagcode.HostUnreachable, s.path.Attr("host"), "this address cannot be reached from another host",
			"%s: %q is a loopback address, but the pipeline spans hosts; use the address other hosts reach it at.", s.describe(), s.host)
	}
	// vllm-omni writes its omni master's and stages' ZMQ endpoints as
	// tcp://<address>:<port>, with no brackets
	// (vllm_omni/engine/stage_engine_startup.py, OmniMasterServer), which
	// ZMQ cannot parse for an IPv6 address.
	if strings.Contains(s.host, ":") {
		ds.errorf(diagcode.HostIPv6Unsupported, s.path.Attr("host"), "vllm-omni's stage-based launch cannot use an IPv6 address",
			"%s: %q is IPv6, but vllm-omni builds its ZMQ endpoints as tcp://<address>:<port> without brackets, which fails for IPv6; use the machine's private IPv4 address.", s.describe(), s.host)
	}
}
