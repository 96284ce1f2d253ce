package pipeline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/shellquote"
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

// launches is one entry per host. A single-host pipeline runs everything
// from one command; across hosts each host starts its stages with
// vllm-omni's stage-based launch, the head (the host of the first stage)
// serving the API and the omni master, the others headless.
func (p *planner) launches(res *Result) []Launch {
	if !p.multiHost() {
		l := Launch{Host: p.hosts[0], Argv: res.ServeArgs, Command: res.ServeCommand, Env: map[string]string{},
			Processes: []Process{{Role: ProcessHead, Argv: res.ServeArgs}}}
		for _, s := range p.stages {
			l.StageIDs = append(l.StageIDs, s.id)
		}
		l.Ports = portsOn(res.Ports, p.hosts[0])
		return []Launch{l}
	}
	head := p.stages[0].host
	out := make([]Launch, 0, len(p.hosts))
	for _, host := range p.hosts {
		l := Launch{Host: host, Env: map[string]string{"VLLM_HOST_IP": host}}
		var commands []string
		for _, s := range p.stages {
			if s.host != host {
				continue
			}
			l.StageIDs = append(l.StageIDs, s.id)
			argv := p.stageArgs(s, head)
			id, role := s.id, ProcessHeadless
			if s == p.stages[0] {
				role = ProcessHead
			}
			l.Processes = append(l.Processes, Process{StageID: &id, Role: role, Argv: argv})
			if l.Argv == nil {
				l.Argv = argv
			}
			commands = append(commands, ShellJoin(argv))
		}
		l.Command = commands[0]
		if len(commands) > 1 {
			// The stage-based launch runs one process per stage; a host with
			// several stages starts them together and waits on all of them.
			l.Command = strings.Join(commands, " & ") + " & wait"
			l.Argv = []string{"/bin/sh", "-c", l.Command}
		}
		l.Ports = portsOn(res.Ports, host)
		out = append(out, l)
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
