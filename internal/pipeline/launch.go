package pipeline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/shellquote"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// ShellJoin renders argv as a shell command line that splits back into
// exactly argv.
func ShellJoin(argv []string) string { return shellquote.Join(argv) }

func (p *planner) configPath() string {
	if p.spec.ConfigPath != "" {
		return p.spec.ConfigPath
	}
	return DefaultConfigPath
}

// serveArgs is the single-host launch: the recipe's
// vllm serve <model> --omni --port <api>, then the config through the flag
// the release reads its dialect from (--stage-configs-path for stage_args,
// where the recipe's --deploy-config would load no stage).
func (p *planner) serveArgs() []string {
	return []string{"vllm", "serve", p.spec.Model, "--omni", "--port", strconv.Itoa(p.apiPort), p.configFlag(), p.configPath()}
}

// effectiveVersion is vllm_omni_version as the user wrote it, or the
// release chosen for them.
func (p *planner) effectiveVersion() string {
	if p.spec.VLLMOmniVersion != "" {
		return p.spec.VLLMOmniVersion
	}
	return p.release.Release.Version
}

// launches is one entry per host, each with the OS processes it runs. A
// single-host pipeline runs everything from one process; across hosts each
// stage is its own process with vllm-omni's stage-based launch, the head
// (the first stage) serving the API and the omni master, the others
// headless. Every process gets its systemd unit; no shell supervises
// several, so a stage that fails is restarted on its own.
func (p *planner) launches(res *Result, doc *stageconfig.Document, serveArgs []string) ([]Launch, error) {
	svc := p.spec.Service.withDefaults()
	c := unitContext{model: p.spec.Model, release: p.release.Release.Version, config: p.configPath(), service: svc,
		rdma: p.spec.Connector.Protocol == "rdma" || p.usesConnector(connectorNixl), headHost: p.stages[0].host}
	multi := p.multiHost()
	if multi {
		c.headPort = p.masterPort
		c.headUnit = svc.UnitPrefix + "-stage-" + strconv.Itoa(p.stages[0].id) + ".service"
	} else {
		c.headUnit = svc.UnitPrefix + ".service"
	}
	envs := stageEnvs(doc)
	out := make([]Launch, 0, len(p.hosts))
	for _, host := range p.hosts {
		l := Launch{Host: firstNonEmpty(host, SingleHost), Env: map[string]string{}}
		if multi {
			l.Env["VLLM_HOST_IP"] = host
		}
		devices := map[int]bool{}
		for _, s := range p.stages {
			if s.host != host {
				continue
			}
			l.StageIDs = append(l.StageIDs, s.id)
			for _, d := range s.devices {
				devices[d] = true
			}
			if !multi {
				continue
			}
			id, role := s.id, ProcessHeadless
			if s == p.stages[0] {
				role = ProcessHead
			}
			l.Processes = append(l.Processes, Process{StageID: &id, Role: role, Argv: p.stageArgs(s, c.headHost),
				Env: envs[s.id], Devices: s.devices, Ports: processPorts(res.Ports, &id, role == ProcessHead),
				UnitName: svc.UnitPrefix + "-stage-" + strconv.Itoa(id) + ".service", host: host})
		}
		if !multi {
			l.Processes = []Process{{Role: ProcessHead, Argv: serveArgs, Env: map[string]string{},
				Devices: sortedKeys(devices), Ports: processPorts(res.Ports, nil, true), UnitName: c.headUnit, host: host}}
		}
		for i := range l.Processes {
			proc := &l.Processes[i]
			proc.Command = ShellJoin(proc.Argv)
			proc.Preflight = p.preflightArgv(svc.PythonPath, res.ConfigSHA256)
			proc.PreflightCommand = shellJoin(proc.Preflight)
			unit, err := unitFor(c, *proc)
			if err != nil {
				return nil, err
			}
			proc.SystemdUnit = unit
		}
		if len(l.Processes) == 1 {
			l.Argv, l.Command = l.Processes[0].Argv, l.Processes[0].Command
		}
		l.Ports = portsOn(res.Ports, host)
		// Devices are the host's GPU indices (no process narrows them), so
		// the host needs as many GPUs as the highest index it uses, plus one.
		for d := range devices {
			l.GPUCount = max(l.GPUCount, d+1)
		}
		out = append(out, l)
	}
	return out, nil
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
// stage-based launch that is the environment of the stage's process.
func stageEnvs(doc *stageconfig.Document) map[int]map[string]string {
	out := map[int]map[string]string{}
	for _, st := range doc.Stages() {
		id, ok := st.ID()
		if !ok {
			continue
		}
		env := map[string]string{}
		m := st.Env()
		for _, k := range stageconfig.MapKeys(m) {
			if v, ok := stageconfig.ScalarString(stageconfig.MapGet(m, k)); ok {
				env[k] = v
			}
		}
		out[id] = env
	}
	return out
}

// stageArgs launches one stage with vllm-omni's stage-based CLI: the
// head's first stage serves the API and the omni master; every other stage
// runs headless and registers with the master.
func (p *planner) stageArgs(s *plannedStage, head string) []string {
	argv := []string{"vllm", "serve", p.spec.Model, "--omni"}
	if s == p.stages[0] {
		argv = append(argv, "--port", strconv.Itoa(p.apiPort))
	}
	argv = append(argv, p.configFlag(), p.configPath(), "--stage-id", strconv.Itoa(s.id))
	if s != p.stages[0] {
		argv = append(argv, "--headless")
	}
	argv = append(argv, "--omni-master-address", head, "--omni-master-port", strconv.Itoa(p.masterPort))
	// Multi-NIC hosts: the address the stage's peers reach it at, where the
	// release has the flag (it is detected otherwise).
	if s.host != head && p.release.Release.StageCLI.Has(releases.FlagOmniReplicaAddr) {
		argv = append(argv, releases.FlagOmniReplicaAddr, s.host)
	}
	return argv
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
func (p *planner) health() Health {
	host := p.stages[0].host
	if host == "" {
		host = "127.0.0.1"
	}
	base := "http://" + hostPort(host, p.apiPort)
	h := Health{Host: host, Port: p.apiPort, LivenessURL: base + "/health", ReadinessURL: base + "/v1/models"}
	h.ReadinessArgv = []string{"python3", "-c", readinessOneLine, h.ReadinessURL, p.spec.Model}
	return h
}

// hostPort writes host:port, an IPv6 host in brackets.
func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

var readinessOneLine = oneLinePython(readinessScript)

// readinessScript exits 0 when the models URL ($1) lists the model ($2),
// and says what it saw otherwise; it times out after ten seconds.
const readinessScript = `import json, sys, urllib.request
url, model = sys.argv[1], sys.argv[2]
try:
    ids = [m.get("id") for m in json.load(urllib.request.urlopen(url, timeout=10)).get("data", [])]
except Exception as e:
    sys.exit("not ready: %s: %s" % (url, e))
if model not in ids:
    sys.exit("not ready: %s lists %s, not %s" % (url, ids or "no model", model))
print("ready: %s serves %s" % (url, model))`
