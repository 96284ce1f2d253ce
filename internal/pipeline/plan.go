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

// planner carries one plan's state through its steps. Each check appends
// what it finds to ds and the plan goes on where it can, so that one plan
// reports every problem. The steps that build the plan (layout, place,
// allocatePorts, assemble, apply) write nothing into it: each returns what
// it decided, Plan keeps it in a field, and a check step judges it.
type planner struct {
	spec     Spec
	ds       Diagnostics
	base     *stageconfig.Document
	basePath Path
	preset   string // the preset loaded as the base; "" for the user's base config
	g        *graph
	split    graphStage
	format   stageconfig.Dialect // the output's, once the release is chosen
	release  releases.Choice
	conn     connector
	// laid is what layout decides: the steps up to assemble read its
	// stages, and every step its hosts (multiHost).
	laid stageLayout
	// planned is what assemble makes of the layout, the placement and the
	// ports: the stages apply, convert and result read.
	planned stageLayout
	ports   portPlan
}

// newPlanner checks the inputs that need no base config and makes the
// choice they settle alone: the connector.
func newPlanner(spec Spec) *planner {
	p := &planner{spec: spec}
	p.checkSpec()
	p.conn = p.chooseConnector()
	return p
}

// Plan computes a pipeline from a Spec. When the returned Diagnostics hold
// an error the Result is nil; warnings come with a Result.
func Plan(spec Spec) (*Result, Diagnostics) {
	p := newPlanner(spec)
	// Problems with the inputs alone do not stop the plan here: the split,
	// the layout and the release are still judged, so one plan reports
	// them all. Problems with the base config do, since nothing after can
	// read it.
	p.checkInputSecrets()
	specErrors := len(p.ds.Errors())
	p.base, p.basePath, p.preset = loadBase(spec, &p.ds)
	if p.base == nil {
		return nil, p.ds
	}
	p.g = readGraph(p.base, &p.ds, p.basePath)
	// A base that is already split is the wrong input as a whole; checked
	// first, before checkGraph's advice on completing a half-made PD pair.
	if !p.checkNotSplit() {
		return nil, p.ds
	}
	checkGraph(p.g, &p.ds, p.basePath, false)
	if len(p.ds.Errors()) > specErrors {
		return nil, p.ds
	}
	var ok bool
	if p.split, ok = p.chooseSplit(); !ok {
		return nil, p.ds
	}
	p.checkArchitecture()
	p.checkVariant()
	// From here each builder is followed by the checks of what it returned,
	// so the diagnostics come in the order of the checks below, wherever
	// the builders' own work happens.
	p.laid = p.layout()
	p.checkLayout()
	p.checkStagePaths()
	p.checkStageEnv()
	p.checkBaseSecrets()
	p.checkHosts()
	p.release, ok = p.chooseRelease()
	if !ok {
		return nil, p.ds
	}
	p.checkIgnoredInputs()
	p.checkReplicas()
	p.format = outputDialect(p.release, p.base.Dialect)
	// Placement and ports are judged even when inputs they do not read are
	// wrong (a relative config_path, a connector typo), so that one plan
	// reports those problems and the GPUs' together; with an input they
	// read wrong they would only add problems that follow from it.
	var devices placement
	if !p.ds.ErrorsUnder(placementInputs...) && p.checkWorldBounds() {
		devices = p.place()
		p.checkPlacement(devices)
	}
	if !p.ds.ErrorsUnder(portInputs...) {
		p.ports = p.allocatePorts()
		p.checkPorts(p.ports)
	}
	if p.ds.HasErrors() {
		return nil, p.ds
	}
	p.planned = assemble(p.laid, devices, p.ports)
	doc, problems, err := p.apply()
	p.ds = append(p.ds, problems...)
	if err != nil {
		p.ds.errorf(diagcode.RenderFailed, nil, "the deploy config cannot be written", "%v", err)
		return nil, p.ds
	}
	doc = p.convert(doc)
	p.translateIgnoredKeys(doc)
	p.writeRequiredKeys(doc)
	if p.ds.HasErrors() {
		return nil, p.ds
	}
	// The planned config must pass the same checks as any config; a failure
	// here means an input combination the earlier steps did not catch.
	var post Diagnostics
	checkGraph(readGraph(doc, &post, nil), &post, nil, false)
	if post.HasErrors() {
		for _, d := range post.Errors() {
			d.Summary = "the planned config fails a check: " + d.Summary
			p.ds = append(p.ds, d)
		}
		return nil, p.ds
	}
	res, err := p.result(doc)
	if err != nil {
		p.ds.errorf(diagcode.RenderFailed, nil, "the deploy config cannot be written", "%v", err)
		return nil, p.ds
	}
	// And what the machines run must be what the release starts.
	if vs := releases.Conform(p.release.Release, deploymentOf(doc, res.Stages, res.Launches, p.release.UserPipeline)); len(vs) > 0 {
		for _, v := range vs {
			p.ds.errorf(diagcode.ReleaseConformance, AttrPath("vllm_omni_version"), "the plan fails vllm-omni "+p.release.Release.Version+"'s checks", "%s", v)
		}
		return nil, p.ds
	}
	return res, p.ds
}

// assemble makes the planned stages from what the steps decided: copies of
// the layout's stages, each with the devices place chose for it and, on
// the PD pair, the connector ports allocatePorts gave its side. The
// layout is left as it is.
func assemble(lay stageLayout, devices placement, ports portPlan) stageLayout {
	stages := make([]plannedStage, len(lay.stages))
	out := stageLayout{stages: make([]*plannedStage, len(lay.stages)), hosts: lay.hosts}
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

func (p *planner) result(doc *stageconfig.Document) (*Result, error) {
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
		Release:      p.release.Release.Version,
		Preset:       p.preset,
		Version:      p.effectiveVersion(),
		Format:       string(doc.Dialect),
		ConfigPath:   p.configPath(),
		APIPort:      p.ports.api,
		ConfigYAML:   string(yamlBytes),
		ConfigSHA256: hex.EncodeToString(sum),
		Ports:        p.ports.list,
	}
	for _, s := range p.planned.stages {
		res.Stages = append(res.Stages, s.info())
	}
	res.Edges = p.planned.edges()
	if err := addLaunches(res, doc, p.launchInputs()); err != nil {
		return nil, err
	}
	res.Diagram = p.diagram(res)
	res.Allocations = p.allocations()
	res.Connector = p.conn.name()
	res.PortRange = PortRange{First: DefaultPortRangeFirst, Last: DefaultPortRangeLast}
	if p.spec.PortRange != nil {
		res.PortRange = *p.spec.PortRange
	}
	pre, dec := p.planned.pdPair()
	res.Prefill, res.Decode = pre.settings(), dec.settings()
	res.ID = contentID(id, res)
	return res, nil
}

// launchInputs are the plan's choices a launch needs beyond the Result.
func (p *planner) launchInputs() launchInputs {
	return launchInputs{
		model: p.spec.Model, release: p.release.Release, asked: p.spec.VLLMOmniVersion,
		service: p.spec.Service, rdma: p.needsMemlock(), stageBased: p.stageBased(), connectors: p.connectorClasses(),
	}
}

func (p *planner) configPath() string {
	if p.spec.ConfigPath != "" {
		return p.spec.ConfigPath
	}
	return DefaultConfigPath
}

// effectiveVersion is vllm_omni_version as the user wrote it, or the
// release chosen for them.
func (p *planner) effectiveVersion() string {
	if p.spec.VLLMOmniVersion != "" {
		return p.spec.VLLMOmniVersion
	}
	return p.release.Release.Version
}

// contentID hashes what a machine runs: the config, the check script and
// every unit file, so that an id change means the machines must change. A
// NUL separates the parts; none of them can hold one. h holds the config
// already.
func contentID(h hash.Hash, res *Result) string {
	write := func(s string) {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	write(checkScriptSHA256)
	write(res.CheckScriptPath)
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
