package pipeline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/envvar"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/shellquote"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// The launch plan: what every host runs, as processes, units and drop-ins,
// made from a Result once its config, stages and ports are planned. This
// file, units.go (the unit files) and preflight.go (the check script's
// words) are the whole of it, and none of them reads what the steps
// before it decided but through the Result: a launch is built from the
// Result, the planned config it describes, and the launchInputs the
// Result does not hold.

// ShellJoin renders argv as a shell command line that splits back into
// exactly argv.
func ShellJoin(argv []string) string { return shellquote.Join(argv) }

// launchInputs are what a launch needs that the Result does not say.
type launchInputs struct {
	model   string
	release releases.Release // the release planned for, whose CLI the processes use
	asked   string           // vllm_omni_version as written, "" when unset
	service ServiceSpec      // as given; the launch fills in the defaults
	rdma    bool             // a KV connector class registers memory with an RDMA NIC
	// stageBased is true when every stage runs as its own process: across
	// hosts, and on one host when the release does not carry each stage's
	// runtime.env to its engine (releases.StageEnvFact).
	stageBased bool
	connectors []string // the PD pair's KV connector classes, whose transports the preflight imports
	// container runs each process in a container of the image; nil on a
	// host install.
	container *containerLaunch
	// registration is the module the preflight's launcher imports before
	// vllm-omni's CLI; nil when the processes exec vllm.
	registration *Registration
}

// addLaunches fills in what the machines run from the rest of res and the
// planned config doc: the launches and the unit file, the check script's
// path, the serve command, the GPUs a host needs and the health checks.
func addLaunches(res *Result, doc *stageconfig.Document, in launchInputs) error {
	lp, err := newLaunchPlan(res, doc, in)
	if err != nil {
		return err
	}
	if res.Launches, res.SystemdUnit, err = launches(lp); err != nil {
		return err
	}
	res.CheckScriptPath = lp.service.CheckScriptPath
	// The serve command is the head's process: on one host the process that
	// runs every stage, across hosts the one that serves the API.
	head := res.Launches[0].Processes[0]
	res.ServeArgs, res.ServeCommand = head.Argv, ShellJoin(head.Argv)
	for _, l := range res.Launches {
		res.GPUCount = max(res.GPUCount, l.GPUCount)
	}
	res.Health = health(in.model, res.Stages[0].Host, res.APIPort, head.UnitName, res.CheckScriptPath)
	return nil
}

// launchPlan is what the launches are built from: the planned stages and
// ports, as the result gives them, and the settings of the launch itself.
type launchPlan struct {
	model      string
	release    releases.Release
	asked      string // vllm_omni_version as written, "" when unset
	flag       string // the flag the release reads the config through
	configPath string
	configSHA  string
	service    ServiceSpec // with defaults
	rdma       bool        // the connector needs the RDMA devices
	apiPort    int
	stageBased bool // launchInputs.stageBased
	masterPort int  // the omni master's; 0 for a whole-pipeline launch
	container  *containerLaunch
	stages     []StageInfo // in output order; the first is the head's
	ports      []Port
	envs       map[int]map[string]string // each stage's environment, from the config
	replicas   map[int]int               // each stage's num_replicas, from the config
	checks     map[int]preflightChecks   // what each stage's preflight imports and counts
	// registration is the module's path the preflight hands its launcher,
	// "" when it execs vllm.
	registration string
}

// newLaunchPlan gathers the launch's inputs: from res its config (path,
// dialect, SHA-256), stages and ports, the omni master's among them; from
// doc each stage's environment, replicas and imports; the rest from in.
func newLaunchPlan(res *Result, doc *stageconfig.Document, in launchInputs) (launchPlan, error) {
	envs, err := stageEnvs(doc)
	lp := launchPlan{
		model: in.model, release: in.release, asked: in.asked,
		flag: in.release.FlagFor(res.Format), configPath: res.ConfigPath, configSHA: res.ConfigSHA256,
		service: in.service.withDefaults(),
		rdma:    in.rdma,
		apiPort: res.APIPort, stageBased: in.stageBased, container: in.container,
		stages: res.Stages, ports: res.Ports, envs: envs, replicas: stageReplicas(doc), checks: stageChecks(doc, in.connectors),
	}
	if in.registration != nil {
		lp.registration = in.registration.Path
	}
	for _, port := range res.Ports {
		if port.Name == portOmniMaster && port.StageID == nil {
			lp.masterPort = port.Port
		}
	}
	return lp, err
}

// hosts are the distinct hosts of the stages, in stage order.
func (lp launchPlan) hosts() []string {
	var out []string
	for _, s := range lp.stages {
		if !containsString(out, s.Host) {
			out = append(out, s.Host)
		}
	}
	return out
}

// masterAddress is where the headless processes reach the head's omni
// master: the head's host, or loopback when every stage runs on one.
func (lp launchPlan) masterAddress() string {
	return firstNonEmpty(lp.stages[0].Host, loopback)
}

const loopback = "127.0.0.1"

// stageUnitName is the instance of the template that runs one stage.
func stageUnitName(prefix string, id int) string {
	return prefix + "-stage@" + strconv.Itoa(id) + ".service"
}

// launches is one entry per host, each with the OS processes it runs, and
// the one unit file every host installs. A whole-pipeline launch runs every
// stage from one process, with its own unit; a stage-based one runs each
// stage as its own process with vllm-omni's stage-based launch, the head
// (the first stage) serving the API and the omni master, the others
// headless, each an instance of one template unit whose drop-in holds what
// differs: its options and its stage's environment. No shell supervises
// several processes, so a stage that fails is restarted on its own.
func launches(lp launchPlan) ([]Launch, UnitFile, error) {
	c := lp.unitContext()
	hosts := lp.hosts()
	out := make([]Launch, 0, len(hosts))
	var unit UnitFile
	for _, host := range hosts {
		l, whole, err := lp.launchOn(c, host, len(hosts) > 1)
		if err != nil {
			return nil, UnitFile{}, err
		}
		if !lp.stageBased {
			unit = whole
		}
		out = append(out, l)
	}
	if lp.stageBased {
		var err error
		if unit, err = stageTemplate(c, lp.flag); err != nil {
			return nil, UnitFile{}, err
		}
	}
	return out, unit, nil
}

// unitContext is what every unit of the launch shares: the model, the
// release and config, the service settings, the head and, stage by stage,
// the checks of every stage and the wait for the head.
func (lp launchPlan) unitContext() unitContext {
	svc := lp.service
	head := lp.stages[0]
	c := unitContext{model: lp.model, release: lp.release.Version, config: lp.configPath, service: svc,
		rdma: lp.rdma, headHost: head.Host, masterAddress: lp.masterAddress(), checks: lp.sharedChecks(), container: lp.container}
	if lp.registration != "" {
		// Every process imports it: the head and a headless stage each
		// resolve the config's pipeline: in their own process.
		c.checks = append(c.checks, "--registration", lp.registration)
	}
	if !lp.stageBased {
		c.headUnit = svc.UnitPrefix + ".service"
		return c
	}
	c.headPort = lp.masterPort
	c.headUnit = stageUnitName(svc.UnitPrefix, head.StageID)
	// Every stage checks every stage's imports, in the template: the
	// head's orchestrator runs every stage's input processor
	// (stage_engine_core_client.py), so the head needs them all, and the
	// stages beside it run from the same install, so the same paths
	// resolve there. The connector's transport only its own stage's engine
	// loads, so that stays the stage's own check.
	c.checks = append(c.checks, importWords(mergeChecks(lp.checks).imports)...)
	// The preflight waits only when the command it execs is headless.
	c.wait = []string{"--head", hostPort(c.masterAddress, c.headPort), "--head-wait", strconv.Itoa(*svc.HeadWaitSeconds), "--head-unit", c.headUnit}
	return c
}

// launchOn is what host runs: its stages, as one process each or one
// process for the whole pipeline, each with the command its unit runs
// and, stage by stage, its drop-in; whole is a whole-pipeline process's
// unit. multi says the pipeline spans hosts.
func (lp launchPlan) launchOn(c unitContext, host string, multi bool) (l Launch, whole UnitFile, err error) {
	l = Launch{Host: firstNonEmpty(host, SingleHost), Env: map[string]string{}}
	if multi {
		l.Env["VLLM_HOST_IP"] = host
	}
	// The host's env is the one the units do not carry (the stages'
	// config does): held to the same rule as theirs.
	for k, v := range l.Env {
		if err := envvar.Check(k, v); err != nil {
			return Launch{}, UnitFile{}, fmt.Errorf("environment %q of %s: %v", k, l.Host, err)
		}
	}
	devices := map[int]bool{}
	for i, s := range lp.stages {
		if s.Host != host {
			continue
		}
		l.StageIDs = append(l.StageIDs, s.StageID)
		for _, d := range s.Devices {
			devices[d] = true
		}
		if lp.stageBased {
			l.Processes = append(l.Processes, lp.stageProcess(i, host))
		}
	}
	if !lp.stageBased {
		l.Processes = []Process{{Role: ProcessHead, Argv: lp.serveArgs(), Env: map[string]string{},
			Devices: sortedKeys(devices), Ports: processPorts(lp.ports, nil, true), UnitName: c.headUnit, host: host,
			checks: mergeChecks(lp.checks)}}
	}
	for i := range l.Processes {
		proc := &l.Processes[i]
		proc.checkWords = processChecks(*proc, c.container != nil)
		proc.exec = execWords(c, *proc)
		if c.container != nil {
			run := c.container.specOf(*proc, c.service.CacheDir)
			proc.run = &run
		}
		if !lp.stageBased {
			if whole, err = wholeUnit(c, *proc); err != nil {
				return Launch{}, UnitFile{}, err
			}
			continue
		}
		dropIn, err := stageDropIn(c, *proc, l.Processes)
		if err != nil {
			return Launch{}, UnitFile{}, err
		}
		proc.DropIn = &dropIn
	}
	l.Ports = portsOn(lp.ports, host)
	// Devices are the host's GPU indices (no process narrows them), so
	// the host needs as many GPUs as the highest index it uses, plus one.
	for d := range devices {
		l.GPUCount = max(l.GPUCount, d+1)
	}
	return l, whole, nil
}

// stageProcess is the process that runs stage i, on host, in a
// stage-based launch: the head (the first stage) or a headless one.
func (lp launchPlan) stageProcess(i int, host string) Process {
	s := lp.stages[i]
	id, role := s.StageID, ProcessHeadless
	if i == 0 {
		role = ProcessHead
	}
	checks := preflightChecks{transports: lp.checks[s.StageID].transports, edgeTransports: lp.checks[s.StageID].edgeTransports}
	argv, own := lp.stageArgs(i)
	return Process{StageID: &id, Role: role, Argv: argv, ownArgs: own,
		Env: lp.envs[id], Devices: s.Devices, Ports: processPorts(lp.ports, &id, role == ProcessHead),
		UnitName: stageUnitName(lp.service.UnitPrefix, id), host: host, checks: checks}
}

// execWords is what a process's unit runs, as systemd expands it: the
// preflight with the launch's and the process's checks (and the wait for
// the head), then `--` and vllm with the process's arguments.
func execWords(c unitContext, proc Process) []string {
	words := preflightWords(c)
	words = append(words, c.wait...)
	words = append(words, proc.checkWords...)
	words = append(words, "--", c.service.VLLMPath)
	return append(words, proc.Argv[1:]...)
}

// serveArgs is the single-host launch: the recipe's
// vllm serve <model> --omni --port <api>, then the config through the flag
// the release reads its dialect from (--stage-configs-path for stage_args,
// where the recipe's --deploy-config would load no stage).
func (lp launchPlan) serveArgs() []string {
	return []string{"vllm", "serve", lp.model, "--omni", "--port", strconv.Itoa(lp.apiPort), lp.flag, lp.configPath}
}

// processPorts lists the ports a process listens on: its stage's, and on
// the head the ports of no stage (the API, the omni master, LMCache's
// proxy). stageID nil means the whole pipeline: every port.
func processPorts(ports []Port, stageID *int, head bool) []NamedPort {
	var out []NamedPort
	for _, p := range ports {
		switch {
		case stageID == nil && head,
			p.StageID != nil && stageID != nil && *p.StageID == *stageID,
			p.StageID == nil && head:
			out = append(out, NamedPort{Name: p.Name, Port: p.Port})
		}
	}
	return sortedPorts(out)
}

// stageEnvs reads each stage's environment from the planned config: in a
// stage-based launch that is the environment of the stage's process. The
// base config's entries passed the same rule when it was loaded (Lint), so
// an entry that fails it here is one the planner wrote.
func stageEnvs(doc *stageconfig.Document) (map[int]map[string]string, error) {
	out := map[int]map[string]string{}
	for _, st := range doc.Stages() {
		id, ok := st.ID()
		if !ok {
			continue
		}
		env, problems := st.EnvVars()
		if len(problems) > 0 {
			return nil, fmt.Errorf("%s: environment %s", st.Describe(), problems[0].Error())
		}
		out[id] = env
	}
	return out, nil
}

// stageArgs launches stage i with vllm-omni's stage-based CLI: the head's
// first stage serves the API and the omni master; every other stage runs
// headless and registers with the master, on loopback when the head is on
// the same single host. The stage's own options come right after --omni,
// at own, where the recipe puts the API port; the words around them every
// stage shares but for the stage id, so the template's ExecStart spells
// them and the stage's drop-in the rest.
func (lp launchPlan) stageArgs(i int) (argv []string, own [2]int) {
	s, head := lp.stages[i], lp.stages[0].Host
	argv = []string{"vllm", "serve", lp.model, "--omni"}
	own[0] = len(argv)
	if i == 0 {
		argv = append(argv, "--port", strconv.Itoa(lp.apiPort))
	} else {
		argv = append(argv, "--headless")
	}
	// Its own stage's replicas: the process starts as many as this says,
	// whatever the config does (replicas.go).
	if n := lp.replicas[s.StageID]; n > 1 && lp.release.StageCLI.Has(releases.FlagOmniDPSizeLocal) {
		argv = append(argv, releases.FlagOmniDPSizeLocal, strconv.Itoa(n))
	}
	// Multi-NIC hosts: the address the stage's peers reach it at, where the
	// release has the flag (it is detected otherwise).
	if s.Host != head && lp.release.StageCLI.Has(releases.FlagOmniReplicaAddr) {
		argv = append(argv, releases.FlagOmniReplicaAddr, s.Host)
	}
	own[1] = len(argv)
	argv = append(argv, lp.flag, lp.configPath, "--stage-id", strconv.Itoa(s.StageID),
		"--omni-master-address", lp.masterAddress(), "--omni-master-port", strconv.Itoa(lp.masterPort))
	return argv, own
}

func portsOn(ports []Port, host string) []int {
	var out []int
	for _, p := range ports {
		if p.Host == host {
			out = append(out, p.Port)
		}
	}
	sort.Ints(out)
	return out
}

// describeHost is used in the diagram's labels.
func describeHost(h string) string {
	if h == "" {
		return ""
	}
	return fmt.Sprintf(" @ %s", h)
}

// health is how a load balancer, a cloud health check or ExecStartPost
// tells the head is up and serves the planned model: /health answers once
// the API server runs; /v1/models lists the models it serves, empty when
// the engines failed behind a running server.
func health(model, headHost string, apiPort int, headUnit, script string) Health {
	host := headHost
	if host == "" {
		host = "127.0.0.1"
	}
	base := "http://" + hostPort(host, apiPort)
	h := Health{Host: host, Port: apiPort, LivenessURL: base + "/health", ReadinessURL: base + "/v1/models", SmokeURL: base + "/v1/chat/completions"}
	h.ReadinessCommand = ShellJoin([]string{"python3", script, "ready", h.ReadinessURL, model})
	h.SmokeCommand = ShellJoin([]string{"python3", script, "smoke", h.SmokeURL, model, headUnit})
	return h
}

// hostPort writes host:port, an IPv6 host in brackets.
func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}
