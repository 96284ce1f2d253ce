package pipeline

import (
	"fmt"
	"sort"
	"strconv"

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

// serveArgs is the single-host launch, as in the recipe:
// vllm serve <model> --omni --port <api> --deploy-config <path>.
func (p *planner) serveArgs() []string {
	return []string{"vllm", "serve", p.spec.Model, "--omni", "--port", strconv.Itoa(p.apiPort), "--deploy-config", p.configPath()}
}

// launches is one entry per host. A single-host pipeline runs everything
// from one command; across hosts each host starts its stages with
// vllm-omni's stage-based launch, the head (the host of the first stage)
// serving the API and the omni master, the others headless.
func (p *planner) launches(res *Result) []Launch {
	if !p.multiHost() {
		l := Launch{Host: p.hosts[0], Argv: res.ServeArgs, Command: res.ServeCommand, Env: map[string]string{}}
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
		for _, s := range p.stages {
			if s.host == host {
				l.StageIDs = append(l.StageIDs, s.id)
			}
		}
		argv := []string{"vllm", "serve", p.spec.Model, "--omni", "--port", strconv.Itoa(p.apiPort), "--deploy-config", p.configPath()}
		for _, id := range l.StageIDs {
			argv = append(argv, "--stage-id", strconv.Itoa(id))
		}
		if host != head {
			argv = append(argv, "--headless")
		}
		argv = append(argv, "--omni-master-address", head, "--omni-master-port", strconv.Itoa(p.masterPort))
		if host != head {
			argv = append(argv, "--omni-replica-address", host)
		}
		l.Argv = argv
		l.Command = ShellJoin(argv)
		l.Ports = portsOn(res.Ports, host)
		out = append(out, l)
	}
	return out
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
