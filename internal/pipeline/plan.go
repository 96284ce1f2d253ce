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

// planner carries one plan's state through its steps. Each step appends
// what it finds to ds and goes on where it can, so that one plan reports
// every problem.
type planner struct {
	spec       Spec
	ds         Diagnostics
	base       *stageconfig.Document
	basePath   Path
	g          *graph
	split      graphStage
	format     stageconfig.Dialect
	release    releases.Choice
	conn       connector
	stages     []*plannedStage // in output order
	byKey      map[string]*plannedStage
	ports      []Port
	apiPort    int
	masterPort int // multi-host only
	// lmcacheProxyPort is where LMCache\'s PD proxy listens, on the head.
	lmcacheProxyPort int
	hosts            []string // distinct hosts in stage order
	// edgePorts are the ports of the connectors that carry an edge across
	// hosts, on the sending host.
	edgePorts map[Edge]int
}

// newPlanner checks the inputs that need no base config and makes the two
// choices they settle alone: the requested dialect and the connector.
func newPlanner(spec Spec) *planner {
	p := &planner{spec: spec, byKey: map[string]*plannedStage{}}
	p.checkSpec()
	p.format = requestedFormat(spec)
	p.conn = p.checkConnector()
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
	specErrors := len(p.ds.Errors())
	p.base, p.basePath = loadBase(spec, &p.ds)
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
	if !p.chooseSplit() {
		return nil, p.ds
	}
	p.checkArchitecture()
	p.layout()
	p.checkIgnoredInputs()
	released := p.chooseRelease()
	// Placement and ports build on every input; with any wrong they would
	// only add problems that follow from it.
	if p.ds.HasErrors() || !released {
		return nil, p.ds
	}
	p.place()
	p.allocatePorts()
	if p.ds.HasErrors() {
		return nil, p.ds
	}
	doc, err := p.apply()
	if err != nil {
		p.ds.errorf(diagcode.RenderFailed, nil, "the deploy config cannot be written", "%v", err)
		return nil, p.ds
	}
	doc = p.convert(doc)
	p.translateIgnoredKeys(doc)
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
		}
	}
	return d
}

// convert writes the planned document in the requested dialect.
func (p *planner) convert(doc *stageconfig.Document) *stageconfig.Document {
	if p.format == "" {
		p.format = doc.Dialect
	}
	if p.format == stageconfig.StageArgs && doc.Dialect == stageconfig.StageArgs {
		return doc
	}
	if p.format == stageconfig.StageArgs {
		// chooseRelease made sure a preset gives the topology.
		topology, _ := p.topologyPreset()
		return p.toStageArgsDialect(doc, topology)
	}
	// chooseRelease found the key: registered, or the user's own.
	key := p.release.PipelineKey
	if doc.Dialect != stageconfig.Stages {
		doc = toStagesDialect(doc, key)
	} else {
		stageconfig.MapInsertBefore(doc.Top(), "pipeline", stageconfig.StrNode(key), stageconfig.MapKeys(doc.Top())...)
	}
	// The deploy loader assumes async_chunk: true, which the sync input
	// processors of the recipe do not serve (releases.DeployLoader).
	if stageconfig.MapGet(doc.Top(), "async_chunk") == nil {
		stageconfig.MapInsertAfter(doc.Top(), "async_chunk", stageconfig.BoolNode(false), "pipeline")
	}
	return doc
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
		Version:      p.effectiveVersion(),
		Format:       string(doc.Dialect),
		ConfigPath:   p.configPath(),
		APIPort:      p.apiPort,
		ConfigYAML:   string(yamlBytes),
		ConfigSHA256: hex.EncodeToString(sum),
		Ports:        p.ports,
	}
	for _, s := range p.stages {
		res.Stages = append(res.Stages, s.info())
		for _, in := range s.inputs {
			res.Edges = append(res.Edges, Edge{From: in, To: s.id})
		}
	}
	sortEdges(res.Edges)
	if res.Launches, err = p.launches(res, doc, p.serveArgs()); err != nil {
		return nil, err
	}
	// The serve command is the head's process: on one host the process that
	// runs every stage, across hosts the one that serves the API.
	head := res.Launches[0].Processes[0]
	res.ServeArgs, res.ServeCommand = head.Argv, head.Command
	for _, l := range res.Launches {
		res.GPUCount = max(res.GPUCount, l.GPUCount)
	}
	res.Health = p.health()
	res.Diagram = p.diagram(res)
	res.Allocations = p.allocations()
	res.Connector = p.conn.name
	res.PortRange = PortRange{First: DefaultPortRangeFirst, Last: DefaultPortRangeLast}
	if p.spec.PortRange != nil {
		res.PortRange = *p.spec.PortRange
	}
	res.Prefill, res.Decode = p.byKey[prefillKey].settings(), p.byKey[decodeKey].settings()
	res.ID = contentID(id, res.Launches)
	return res, nil
}

// contentID hashes what a machine runs: the config, and each process's
// command and unit, so that an id change means the machines must change. A
// NUL separates the parts; none of them can hold one. h holds the config
// already.
func contentID(h hash.Hash, launches []Launch) string {
	// The strings go through one buffer, not a copy of each (a unit is
	// 8 KB).
	buf := make([]byte, 0, 2048)
	write := func(s string) {
		for len(s) > 0 {
			n := min(len(s), cap(buf)-len(buf))
			buf = append(buf, s[:n]...)
			s = s[n:]
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
		}
	}
	for _, l := range launches {
		write("\x00")
		write(l.Host)
		for _, proc := range l.Processes {
			write("\x00")
			write(proc.Command)
			write("\x00")
			write(proc.SystemdUnit)
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}
