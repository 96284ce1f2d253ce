package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// DefaultConfigPath is where the launch command expects the deploy config
// when the user does not say.
const DefaultConfigPath = "/etc/vllm-omni/deploy-config.yaml"

// baseConfig is the base config as the steps read it: the document, the
// attribute its problems are reported at, the preset it is and its stage
// graph, read once. The steps only read it; apply edits a copy.
type baseConfig struct {
	doc    *stageconfig.Document
	path   Path
	preset string // the preset loaded; "" for the user's base_config
	g      *graph
}

// user reports whether the base is the user's base_config, not a preset.
func (b baseConfig) user() bool { return b.preset == "" }

// decisions are what the steps of a plan decided, each kept for the steps
// after it: the pair's connector, the base, the release and the output it
// writes, whether each stage runs as its own process, and the planned
// stages with their devices and ports.
type decisions struct {
	conn       connector
	base       baseConfig
	release    releases.Choice
	out        output
	stageBased bool
	planned    stageLayout
	ports      portPlan
	// registration is the module the processes import first; nil when
	// they import none.
	registration *Registration
}

// Plan computes a pipeline from a Spec. When the returned Diagnostics hold
// an error the Result is nil; warnings come with a Result. Each check
// appends what it finds to one list and the plan goes on where it can, so
// that one plan reports every problem.
func Plan(spec Spec) (*Result, Diagnostics) {
	var ds Diagnostics
	d, ok := decide(spec, &ds)
	if !ok {
		return nil, ds
	}
	res := write(spec, d, &ds)
	return res, ds
}

// decide runs the steps that decide the plan. Each takes what it reads
// and returns what it decides; a check step after each judges it, so the
// diagnostics come in the order of the checks below, wherever a step's
// own work happens. ok is false when a problem stops the plan.
func decide(spec Spec, ds *Diagnostics) (decisions, bool) {
	// What the processes see of the machine, which the steps that judge
	// paths read: the units' sandbox, or the containers' mounts.
	sandbox := launchSandbox(spec)
	checkSpec(spec, sandbox, ds)
	conn := chooseConnector(spec.Connector, ds)
	checkInputSecrets(spec, ds)
	base, ok := readBase(spec, ds)
	if !ok {
		return decisions{}, false
	}
	split, ok := chooseSplit(base.g, spec.SplitStage, ds)
	if !ok {
		return decisions{}, false
	}
	checkArchitecture(spec, base, split, ds)
	checkVariant(spec, base.preset, ds)
	laid := layout(spec, base.g, split)
	checkLayout(laid, spec.StageOverrides, conn, ds)
	checkStagePaths(laid, base.path, sandbox, ds)
	checkStageEnv(base, sandbox, ds)
	checkBaseSecrets(base, spec.Service, ds)
	checkHosts(laid, ds)
	release, out, ok := chooseRelease(spec, base, laid, conn, ds)
	if !ok {
		return decisions{}, false
	}
	stageBased := stageBasedLaunch(laid, release.Release)
	checkIgnoredInputs(spec.Service, release.Release, stageBased, ds)
	checkImageRelease(spec.Container, release.Release.Version, ds)
	checkReplicas(laid, release.Release, stageBased, base.path, ds)
	devices, ports := allocateGPUsAndPorts(spec, base, laid, conn, release.Release.Handoff, stageBased, ds)
	if ds.HasErrors() {
		return decisions{}, false
	}
	planned := assemble(laid, devices, ports)
	reg, err := planRegistration(spec, release, registrationDefinition(base), planned)
	if err != nil {
		ds.errorf(diagcode.RenderFailed, nil, "the pipeline registration cannot be written", "%v", err)
		return decisions{}, false
	}
	if reg != nil {
		out.pipeline = reg.Pipeline
	}
	return decisions{conn: conn, base: base, release: release, out: out, stageBased: stageBased,
		planned: planned, ports: ports, registration: reg}, true
}

// readBase loads the base config and reads its graph, and checks both.
// Problems with the inputs alone do not stop the plan here: the split,
// the layout and the release are still judged, so one plan reports them
// all. Problems with the base config do, since nothing after can read it.
func readBase(spec Spec, ds *Diagnostics) (baseConfig, bool) {
	specErrors := len(ds.Errors())
	var base baseConfig
	base.doc, base.path, base.preset = loadBase(spec, ds)
	if base.doc == nil {
		return base, false
	}
	base.g = readGraph(base.doc, ds, base.path)
	// A base that is already split is the wrong input as a whole; checked
	// first, before checkGraph's advice on completing a half-made PD pair.
	if !checkNotSplit(base, ds) {
		return base, false
	}
	checkGraph(base.g, ds, base.path, false)
	return base, len(ds.Errors()) == specErrors
}

// allocateGPUsAndPorts places the layout's stages on GPUs and hands out their ports,
// each followed by its checks. Placement and ports are judged even when
// inputs they do not read are wrong (a relative config_path, a connector
// typo), so that one plan reports those problems and the GPUs' together;
// with an input they read wrong they would only add problems that follow
// from it.
func allocateGPUsAndPorts(spec Spec, base baseConfig, laid stageLayout, conn connector, handoff releases.HandoffGate, stageBased bool, ds *Diagnostics) (placement, portPlan) {
	var devices placement
	if !ds.ErrorsUnder(placementInputs...) && checkWorldBounds(laid, base.path, ds) {
		devices = place(laid, spec.Previous, spec.GPUs)
		checkPlacement(laid, devices, spec.GPUs, ds)
	}
	var ports portPlan
	if !ds.ErrorsUnder(portInputs...) {
		ports = allocatePorts(spec, base, laid, conn, handoff, stageBased)
		checkPorts(laid, conn, handoff, base.path, ports, ds)
	}
	return devices, ports
}

// write makes the planned config from the decisions and the Result from
// it: apply, convert and the release's key rules, the post-check, then
// the Result and release conformance. nil when a problem stops it.
func write(spec Spec, d decisions, ds *Diagnostics) *Result {
	doc, problems, err := apply(spec.Connector, d.base, d.planned, d.conn, d.ports)
	*ds = append(*ds, problems...)
	if err != nil {
		ds.errorf(diagcode.RenderFailed, nil, "the deploy config cannot be written", "%v", err)
		return nil
	}
	doc = convert(doc, d.out, d.planned, ds)
	checkRegistrationAsyncChunk(doc, d.registration, d.release.Release, d.base.path, ds)
	translateIgnoredKeys(doc, d.release.Release, d.base, ds)
	writeRequiredKeys(doc, d.release.Release, ds)
	if ds.HasErrors() || !postCheck(doc, ds) {
		return nil
	}
	if spec.Container != nil {
		if err := localizeDevices(doc, d.planned, d.stageBased); err != nil {
			ds.errorf(diagcode.RenderFailed, nil, "the deploy config cannot be written", "%v", err)
			return nil
		}
	}
	res, err := result(spec, d, doc)
	if err != nil {
		ds.errorf(diagcode.RenderFailed, nil, "the deploy config cannot be written", "%v", err)
		return nil
	}
	if checkContainerRuns(spec, res, ds); ds.HasErrors() {
		return nil
	}
	// And what the machines run must be what the release starts.
	if vs := releases.Conform(d.release.Release, deploymentOf(doc, res.Stages, res.Launches, !d.release.Native())); len(vs) > 0 {
		for _, v := range vs {
			ds.errorf(diagcode.ReleaseConformance, AttrPath("vllm_omni_version"), "the plan fails vllm-omni "+d.release.Release.Version+"'s checks", "%s", v)
		}
		return nil
	}
	return res
}

// postCheck holds the planned config to the same checks as any config; a
// failure here means an input combination the earlier steps did not
// catch. Its errors are added with "the planned config fails a check: "
// in front.
func postCheck(doc *stageconfig.Document, ds *Diagnostics) bool {
	var post Diagnostics
	checkGraph(readGraph(doc, &post, nil), &post, nil, false)
	for _, d := range post.Errors() {
		d.Summary = "the planned config fails a check: " + d.Summary
		*ds = append(*ds, d)
	}
	return !post.HasErrors()
}

// assemble makes the planned stages from what the steps decided: copies of
// the layout's stages, each with the devices place chose for it and, on
// the PD pair, the connector ports allocatePorts gave its side. The
// layout is left as it is.
func assemble(lay stageLayout, devices placement, ports portPlan) stageLayout {
	stages := make([]plannedStage, len(lay.stages))
	out := stageLayout{split: lay.split, stages: make([]*plannedStage, len(lay.stages)), hosts: lay.hosts}
	for i, s := range lay.stages {
		c := &stages[i]
		*c = *s
		c.devices = devices[s.key]
		c.ports, c.handshakePort = ports.sides[s.key], ports.handshake[s.key]
		out.stages[i] = c
	}
	return out
}

// placementInputs are the attributes placement reads: the stages' devices,
// parallel sizes and memory, and the GPUs a host has. portInputs are what
// the port allocation reads: the connector (its ports), the given ports
// and the range.
var (
	placementInputs = []string{"model", "preset", "base_config", "split_stage", "prefill", "decode", "stage_overrides", "gpus"}
	portInputs      = []string{"model", "preset", "base_config", "split_stage", "prefill", "decode", "stage_overrides", "connector", "api_port", "port_range", "reserved_ports"}
)

// outputDialect is the dialect the plan writes: the release's choice, or
// the base's own when the choice leaves it open.
func outputDialect(c releases.Choice, base stageconfig.Dialect) stageconfig.Dialect {
	if c.Dialect == "" {
		return base
	}
	return stageconfig.Dialect(c.Dialect)
}

// deploymentOf is what release conformance checks of a plan: the config,
// every process's command line, and what the plan knows that the config
// does not say (the PD pair, each stage's host). The planner and the tests
// that check its output again build it here.
func deploymentOf(doc *stageconfig.Document, stages []StageInfo, launches []Launch, userPipeline bool) releases.Deployment {
	planned := &releases.Planned{Hosts: map[int]string{}}
	for _, s := range stages {
		switch s.Role {
		case RolePrefill:
			planned.Prefill = s.StageID
		case RoleDecode:
			planned.Decode = s.StageID
		}
		planned.Hosts[s.StageID] = s.Host
	}
	d := releases.Deployment{Doc: doc, UserPipeline: userPipeline, Planned: planned}
	for _, l := range launches {
		for _, proc := range l.Processes {
			d.Argvs = append(d.Argvs, proc.Argv)
			d.Envs = append(d.Envs, processEnv(l, proc))
		}
	}
	return d
}

// processEnv is the environment the plan gives a process: its host's and
// its own.
func processEnv(l Launch, proc Process) map[string]string {
	env := make(map[string]string, len(l.Env)+len(proc.Env))
	for k, v := range l.Env {
		env[k] = v
	}
	for k, v := range proc.Env {
		env[k] = v
	}
	return env
}

// result is the Result of the planned config doc: its YAML, the planned
// stages, ports and launches, and the settings the plan used.
func result(spec Spec, d decisions, doc *stageconfig.Document) (*Result, error) {
	yamlBytes, err := doc.Render()
	if err != nil {
		return nil, err
	}
	// The content id hashes the config first: its hash so far is the
	// config's SHA-256, so the config is hashed once.
	id := sha256.New()
	id.Write(yamlBytes)
	sum := id.Sum(nil)
	res := &Result{
		Release:      d.release.Release.Version,
		Preset:       d.base.preset,
		Version:      firstNonEmpty(spec.VLLMOmniVersion, d.release.Release.Version),
		Format:       string(doc.Dialect),
		ConfigPath:   spec.configPath(),
		APIPort:      d.ports.api,
		ConfigYAML:   string(yamlBytes),
		ConfigSHA256: hex.EncodeToString(sum),
		Ports:        d.ports.list,
		Registration: d.registration,
	}
	for _, s := range d.planned.stages {
		res.Stages = append(res.Stages, s.info())
	}
	res.Edges = d.planned.edges()
	if err := addLaunches(res, doc, launchInputsOf(spec, d)); err != nil {
		return nil, err
	}
	res.Diagram = diagram(d.planned, res.Edges, d.conn.name())
	res.Allocations = allocations(d.planned, d.ports.list, d.release.Release.Version)
	res.Connector = d.conn.name()
	res.PortRange = PortRange{First: DefaultPortRangeFirst, Last: DefaultPortRangeLast}
	if spec.PortRange != nil {
		res.PortRange = *spec.PortRange
	}
	pre, dec := d.planned.pdPair()
	res.Prefill, res.Decode = pre.settings(), dec.settings()
	res.ID = contentID(id, res)
	return res, nil
}

// launchInputsOf are the inputs and decisions a launch needs beyond the
// Result.
func launchInputsOf(spec Spec, d decisions) launchInputs {
	settings := connectorSettings(spec.Connector)
	return launchInputs{
		model: spec.Model, release: d.release.Release, asked: spec.VLLMOmniVersion, service: spec.service(),
		rdma: d.conn.memlock(settings), stageBased: d.stageBased, connectors: d.conn.classes(),
		container:    containerLaunchOf(spec, d.release.Release.Version, d.conn.memlock(settings), settings.Protocol == "rdma", d.registration),
		registration: d.registration,
	}
}

// configPath is config_path as given, or the default.
func (s Spec) configPath() string { return firstNonEmpty(s.ConfigPath, DefaultConfigPath) }

// contentID hashes what a machine runs: the config, the check script, the
// pipeline registration and every unit file, so that an id change means
// the machines must change. A NUL separates the parts; none of them can
// hold one. h holds the config already.
func contentID(h hash.Hash, res *Result) string {
	write := func(s string) {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	write(checkScriptSHA256)
	write(res.CheckScriptPath)
	if r := res.Registration; r != nil {
		write(r.Path)
		write(r.Content)
	}
	write(res.SystemdUnit.Path)
	write(res.SystemdUnit.Content)
	for _, l := range res.Launches {
		write(l.Host)
		for _, proc := range l.Processes {
			write(proc.UnitName)
			if proc.DropIn != nil {
				write(proc.DropIn.Path)
				write(proc.DropIn.Content)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
