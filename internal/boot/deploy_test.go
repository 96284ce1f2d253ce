package boot

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// deployment is one example, applied: the machines it describes, the
// pipelines it planned and the checks it hands the operator.
type deployment struct {
	name      string
	dir       string
	tf        func(args ...string) []byte
	machines  []plannedMachine
	pipelines []plannedPipeline
	// checks are the check_commands output: one script, or one per
	// machine by the machine's key.
	checks  any
	rules   []firewallRule
	outputs map[string]any
}

// firewallRule is a resource of the example that opens ports of a machine
// (input.target is the machine's id) to others: one port, or a range.
type firewallRule struct {
	address  string
	target   string
	from, to int
}

// plannedMachine is a resource of the example that carries a user_data:
// what stands in for a cloud's instance.
type plannedMachine struct {
	address  string // terraform_data.gpu_machine["10.20.0.11"]
	id       string // the resource's id, which its firewall rules target
	key      string // its for_each key, "" without one
	ip       string // its private_ip, "" where the example names none
	gpus     int    // its gpus, 0 where the example names none
	userData string
	doc      cloudConfig
}

// cloudConfig is what the test reads of a user_data.
type cloudConfig struct {
	WriteFiles []struct {
		Path    string `yaml:"path"`
		Content string `yaml:"content"`
	} `yaml:"write_files"`
	RunCmd [][]string `yaml:"runcmd"`
}

// file is the content the document writes at path, "" when none.
func (c cloudConfig) file(path string) string {
	for _, f := range c.WriteFiles {
		if f.Path == path {
			return f.Content
		}
	}
	return ""
}

// units are the units the document enables, in its order.
func (c cloudConfig) units() []string {
	var out []string
	for _, cmd := range c.RunCmd {
		if len(cmd) > 2 && cmd[0] == "systemctl" && cmd[1] == "enable" {
			out = append(out, cmd[len(cmd)-1])
		}
	}
	return out
}

// plannedPipeline is what the test reads of an omni_pd_pipeline.
type plannedPipeline struct {
	Address         string   `json:"-"`
	Release         string   `json:"vllm_omni_release"`
	ServeArgs       []string `json:"serve_args"`
	ConfigPath      string   `json:"config_path"`
	ConfigSHA256    string   `json:"config_sha256"`
	CheckScriptPath string   `json:"check_script_path"`
	APIPort         int      `json:"api_port"`
	GPUCount        int      `json:"gpu_count"`
	Model           string   `json:"model"`
	SystemdUnit     struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	} `json:"systemd_unit"`
	Launches []struct {
		Host      string `json:"host"`
		GPUCount  int    `json:"gpu_count"`
		Processes []struct {
			Role          string `json:"role"`
			StageID       *int   `json:"stage_id"`
			UnitName      string `json:"unit_name"`
			SystemdDropin *struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			} `json:"systemd_dropin"`
		} `json:"processes"`
	} `json:"launches"`
	Ports []struct {
		Name    string  `json:"name"`
		Port    int     `json:"port"`
		StageID *int    `json:"stage_id"`
		Host    *string `json:"host"`
	} `json:"ports"`
}

// applyExample applies examples/deployments/<name> with the provider built
// from this checkout, in a copy, and reads back what it planned.
func applyExample(t *testing.T, name string, vars ...string) *deployment {
	t.Helper()
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tf == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("TF_ACC_TERRAFORM_PATH is not set; scripts/test-env.sh sets it")
		}
		t.Skip("needs TF_ACC_TERRAFORM_PATH (scripts/test-env.sh sets it)")
	}
	cliConfig := testtool.ProviderMirror(t)
	d := &deployment{name: name, dir: filepath.Join(testtool.CopyExamples(t), "deployments", name)}
	d.tf = func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(tf, append([]string{"-chdir=" + d.dir}, args...)...)
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if e, ok := err.(*exec.ExitError); ok {
				stderr = e.Stderr
			}
			t.Fatalf("%s: terraform %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr)
		}
		return out
	}
	d.tf("init", "-input=false", "-backend=false", "-no-color")
	apply := []string{"apply", "-input=false", "-no-color", "-auto-approve"}
	for _, v := range vars {
		apply = append(apply, "-var="+v)
	}
	d.tf(apply...)
	d.read(t)
	return d
}

// read fills the deployment from `terraform show -json`.
func (d *deployment) read(t *testing.T) {
	t.Helper()
	var state struct {
		Values struct {
			Outputs map[string]struct {
				Value any `json:"value"`
			} `json:"outputs"`
			RootModule module `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal(d.tf("show", "-json"), &state); err != nil {
		t.Fatal(err)
	}
	d.outputs = map[string]any{}
	for k, o := range state.Values.Outputs {
		d.outputs[k] = o.Value
	}
	d.checks = d.outputs["check_commands"]
	for _, r := range state.Values.RootModule.all() {
		switch r.Type {
		case "terraform_data":
			var in struct {
				ID    string         `json:"id"`
				Input map[string]any `json:"input"`
			}
			if json.Unmarshal(r.Values, &in) != nil {
				continue
			}
			if target, ok := in.Input["target"].(string); ok {
				d.rules = append(d.rules, ruleOf(r.Address, target, in.Input))
				continue
			}
			ud, _ := in.Input["user_data"].(string)
			if !strings.HasPrefix(ud, "#cloud-config\n") {
				continue
			}
			m := plannedMachine{address: r.Address, id: in.ID, userData: ud}
			if k, ok := r.Index.(string); ok {
				m.key = k
			}
			m.ip, _ = in.Input["private_ip"].(string)
			if g, ok := in.Input["gpus"].(float64); ok {
				m.gpus = int(g)
			}
			if err := yaml.Unmarshal([]byte(ud), &m.doc); err != nil {
				t.Fatalf("%s: user_data is not YAML: %v", r.Address, err)
			}
			d.machines = append(d.machines, m)
		case "omni_pd_pipeline":
			var p plannedPipeline
			if err := json.Unmarshal(r.Values, &p); err != nil {
				t.Fatalf("%s: %v", r.Address, err)
			}
			p.Address = r.Address
			d.pipelines = append(d.pipelines, p)
		}
	}
	if len(d.machines) == 0 || len(d.pipelines) == 0 {
		t.Fatalf("%s plans %d machines and %d pipelines; the boot test needs both", d.name, len(d.machines), len(d.pipelines))
	}
}

// ruleOf reads a firewall rule's port (port) or range (from_port, to_port).
func ruleOf(address, target string, in map[string]any) firewallRule {
	r := firewallRule{address: address, target: target}
	if p, ok := in["port"].(float64); ok {
		r.from, r.to = int(p), int(p)
	}
	if p, ok := in["from_port"].(float64); ok {
		r.from = int(p)
	}
	if p, ok := in["to_port"].(float64); ok {
		r.to = int(p)
	}
	return r
}

// checkScript is the script check_commands gives for machine m.
func (d *deployment) checkScript(t *testing.T, m plannedMachine) string {
	t.Helper()
	switch c := d.checks.(type) {
	case string:
		if len(d.machines) != 1 {
			t.Fatalf("%s: one check_commands script for %d machines", d.name, len(d.machines))
		}
		return c
	case map[string]any:
		for _, k := range []string{m.key, m.ip} {
			if s, ok := c[k].(string); ok && k != "" {
				return s
			}
		}
		t.Fatalf("%s: check_commands has no script for %s (keys %v)", d.name, m.address, slices.Sorted(maps.Keys(c)))
	}
	t.Fatalf("%s: no check_commands output, or not a script (%T)", d.name, d.checks)
	return ""
}

// module is a module of `terraform show -json`'s values.
type module struct {
	Resources    []resource `json:"resources"`
	ChildModules []module   `json:"child_modules"`
}

// resource is a resource of a module, its values as the state holds them.
type resource struct {
	Address string          `json:"address"`
	Type    string          `json:"type"`
	Index   any             `json:"index"`
	Values  json.RawMessage `json:"values"`
}

// all is every resource of the module and its children.
func (m module) all() []resource {
	out := append([]resource{}, m.Resources...)
	for _, c := range m.ChildModules {
		out = append(out, c.all()...)
	}
	return out
}

// process is one unit a machine runs, with what the plan says it gets.
type process struct {
	unit     string
	pipeline *plannedPipeline
	role     string
	stageID  int
	python   string            // the Python the unit runs the preflight in
	argv     []string          // the vllm argv the unit hands on
	env      map[string]string // the environment the unit sets
}

// processes are the units machine m enables, matched to the plan.
func (d *deployment) processes(t *testing.T, m plannedMachine) []process {
	t.Helper()
	var out []process
	for _, unit := range m.doc.units() {
		p, ok := d.process(t, m, unit)
		if !ok {
			t.Fatalf("%s enables %s, which no pipeline of the plan has", m.address, unit)
		}
		out = append(out, p)
	}
	return out
}

func (d *deployment) process(t *testing.T, m plannedMachine, unit string) (process, bool) {
	t.Helper()
	for i := range d.pipelines {
		pl := &d.pipelines[i]
		for _, l := range pl.Launches {
			for _, pr := range l.Processes {
				if pr.UnitName != unit {
					continue
				}
				if pr.StageID == nil || pr.SystemdDropin == nil {
					t.Fatalf("%s: %s is not a stage process with a drop-in; the boot test reads stage-based launches", d.name, unit)
				}
				template := m.doc.file(pl.SystemdUnit.Path)
				dropin := m.doc.file(pr.SystemdDropin.Path)
				if template != pl.SystemdUnit.Content || dropin != pr.SystemdDropin.Content {
					t.Fatalf("%s: the user_data of %s writes another unit or drop-in for %s than the plan's", d.name, m.address, unit)
				}
				p := process{unit: unit, pipeline: pl, role: pr.Role, stageID: *pr.StageID}
				var words []string
				words, p.env = expandUnit(t, unit, template, dropin)
				p.python, p.argv = words[0], words[slices.Index(words, "--")+1:]
				if path.Base(p.python) == "env" {
					// "/usr/bin/env python3": the Python found on PATH.
					p.python += " " + words[1]
				}
				return p, true
			}
		}
	}
	return process{}, false
}

// unitWords are the drop-in's variables the template's ExecStart splits
// into the preflight's and vllm's words; the preflight takes them out of
// vllm's environment.
var unitWords = []string{"OMNI_PD_CHECKS", "OMNI_PD_STAGE_ARGS"}

// expandUnit reads, as systemd does (systemd.service(5), systemd.exec(5)),
// the command line of a template instance with its drop-in: the
// template's ExecStart, the preflight's words, "--" and vllm's, with %i the instance
// and each unbraced $NAME split at white space into words; and the
// environment the unit sets, the drop-in's Environment= after the
// template's.
func expandUnit(t *testing.T, unit, template, dropin string) ([]string, map[string]string) {
	t.Helper()
	instance := strings.TrimSuffix(unit[strings.Index(unit, "@")+1:], ".service")
	env := map[string]string{}
	var execStart string
	for _, text := range []string{template, dropin} {
		for _, line := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(line, "Environment="); ok {
				for _, a := range environmentWords(t, v) {
					k, val, _ := strings.Cut(a, "=")
					env[k] = val
				}
			}
			if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
				execStart = v
			}
		}
	}
	if strings.ContainsAny(execStart, `"'\`) {
		t.Fatalf("%s: ExecStart quotes or escapes a word, which this test does not read: %s", unit, execStart)
	}
	var argv []string
	for _, w := range strings.Fields(execStart) {
		w = strings.ReplaceAll(w, "%i", instance)
		if name, ok := strings.CutPrefix(w, "$"); ok {
			argv = append(argv, strings.Fields(env[name])...)
			continue
		}
		argv = append(argv, w)
	}
	if slices.Index(argv, "--") < 0 {
		t.Fatalf("%s: ExecStart has no \"--\" before vllm's argv: %s", unit, execStart)
	}
	for _, w := range unitWords {
		delete(env, w)
	}
	return argv, env
}

// environmentWords splits an Environment= value into its assignments,
// each double-quoted as the plan writes them (systemd.exec(5)): a
// backslash escapes the next character.
func environmentWords(t *testing.T, v string) []string {
	t.Helper()
	var out []string
	rest := strings.TrimSpace(v)
	for rest != "" {
		if rest[0] != '"' {
			t.Fatalf("Environment=%s: the plan quotes each assignment", v)
		}
		var w strings.Builder
		i := 1
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			w.WriteByte(rest[i])
		}
		if i == len(rest) {
			t.Fatalf("Environment=%s: an unclosed quote", v)
		}
		out = append(out, w.String())
		rest = strings.TrimSpace(rest[i+1:])
	}
	return out
}

func (p process) String() string { return fmt.Sprintf("%s (stage %d, %s)", p.unit, p.stageID, p.role) }

// containerUnbootable says, by runtime, why the boot test's machines
// cannot run a deployment's containers.
var containerUnbootable = map[string]string{
	"docker": "its units run each stage in a docker container, and the boot image has no docker: its daemon sets up a bridge and iptables rules of its own and was not tried nested in systemd-nspawn, where runc, which it starts containers with, cannot create cgroups in the machine's read-only cgroup tree (measured with podman)",
	"podman": "its units run each stage in a podman container with --cgroups=no-conmon, and podman nested in this machine's systemd-nspawn starts a container only with --cgroups=disabled (runc cannot create cgroups in the machine's read-only cgroup tree; crun's systemd cgroup manager needs D-Bus), which that flag of the plan's argv overrides; the boot image has no podman either",
}

// unbootable is why the boot test cannot boot d's machines, "" when it
// can: a deployment whose units run containers. TestContainerPlan runs a
// plan's container units with podman on this machine instead.
func (d *deployment) unbootable() string {
	for _, pl := range d.pipelines {
		for _, l := range pl.Launches {
			for _, pr := range l.Processes {
				unit := pl.SystemdUnit.Content
				if pr.SystemdDropin != nil {
					unit += "\n" + pr.SystemdDropin.Content
				}
				if m := execStartOf.FindStringSubmatch(unit); m != nil && containerUnbootable[path.Base(m[1])] != "" {
					return d.name + ": " + containerUnbootable[path.Base(m[1])] + ". TestContainerPlan runs a plan's container units with podman instead."
				}
			}
		}
	}
	return ""
}

// execStartOf is a unit's ExecStart= executable.
var execStartOf = regexp.MustCompile(`(?m)^ExecStart=[-+@:!]*(\S+)`)
