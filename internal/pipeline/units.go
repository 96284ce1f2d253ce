package pipeline

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// unitContext is what every unit of one plan shares.
type unitContext struct {
	model    string
	release  string
	config   string
	service  ServiceSpec // with defaults
	rdma     bool
	headHost string // the head's host, "" on one host
	// masterAddress is where the headless processes dial the omni master.
	masterAddress string
	headPort      int    // the omni master port; 0 for a whole-pipeline launch
	headUnit      string // the head process's unit name
	// checks are the preflight's words every process shares: the release,
	// the vLLM line and the deploy config with its SHA-256, and with a
	// stage-based launch every stage's imports.
	checks []string
	// wait is, with a stage-based launch, the head's omni master for the
	// preflight of a headless stage to wait for.
	wait []string
	// container runs each process in a container of the image; nil on a
	// host install.
	container *containerLaunch
}

// unitStartTimeout bounds a unit's start-up, which for Type=exec ends
// once the preflight has been executed: only nvidia-modprobe runs before
// it. The wait for the head, the checks and model loading all come after,
// in the main process, so none of them holds multi-user.target.
const unitStartTimeout = 120

// The variables a stage's drop-in sets and the template's ExecStart splits
// into words (systemd.service(5), "Command lines": an unbraced $NAME is
// split at whitespace): the preflight's options for the stage, and the
// stage's own vllm options. The preflight removes both before it execs
// vllm.
const (
	unitChecksVar = "OMNI_PD_CHECKS"
	unitArgsVar   = "OMNI_PD_STAGE_ARGS"
)

// A UnitFile is a file the plan writes under /etc/systemd/system.
type UnitFile struct {
	Path    string
	Content string
}

// UnitDir is where the units and their drop-ins are installed.
const UnitDir = "/etc/systemd/system"

// templateName is the template unit a stage-based launch instantiates once
// per stage, as <prefix>-stage@<stage id>.service.
func templateName(prefix string) string { return prefix + "-stage@.service" }

// dropInPath is where a stage's drop-in goes: systemd reads
// <unit>.d/*.conf after the template (systemd.unit(5), "Description").
func dropInPath(unit string) string { return UnitDir + "/" + unit + ".d/plan.conf" }

// preflightWords are the words before `--` of a process's ExecStart: the
// Python vllm runs in, the check script, and the checks every process
// shares.
func preflightWords(c unitContext) []string {
	return append(append(pythonArgv(c.service.PythonPath), c.service.CheckScriptPath, "preflight"), c.checks...)
}

// wholeUnit renders the unit of a whole-pipeline launch: one process, so
// its ExecStart holds all of its command.
func wholeUnit(c unitContext, proc Process) (UnitFile, error) {
	if c.container != nil {
		return containerWholeUnit(c, proc)
	}
	execStart, err := systemd.Command(proc.exec)
	if err != nil {
		return UnitFile{}, err
	}
	u := serviceUnit(c, "(all stages)", execStart, "One process runs every stage.", false, privilegedPorts(proc.Ports))
	return UnitFile{Path: UnitDir + "/" + proc.UnitName, Content: u.Render()}, nil
}

// stageTemplate renders the template every stage of a stage-based launch
// runs from, the same on every host: each stage is an instance (%i, its
// stage id), and its drop-in sets what differs between stages.
func stageTemplate(c unitContext, flag string) (UnitFile, error) {
	if c.container != nil {
		return containerTemplate(c)
	}
	s := c.service
	pre, err := systemd.Command(preflightWords(c))
	if err != nil {
		return UnitFile{}, err
	}
	serve, err := systemd.Command([]string{s.VLLMPath, "serve", c.model, "--omni"})
	if err != nil {
		return UnitFile{}, err
	}
	config, err := systemdArgs([]string{flag, c.config, "--stage-id"})
	if err != nil {
		return UnitFile{}, err
	}
	master, err := systemdArgs([]string{"--omni-master-address", c.masterAddress, "--omni-master-port", strconv.Itoa(c.headPort)})
	if err != nil {
		return UnitFile{}, err
	}
	wait, err := systemdArgs(c.wait)
	if err != nil {
		return UnitFile{}, err
	}
	execStart := pre + " " + wait + " $" + unitChecksVar + " -- " + serve + " $" + unitArgsVar + " " + config + " %i " + master
	u := serviceUnit(c, "stage %i", execStart, "", true, nil)
	return UnitFile{Path: UnitDir + "/" + templateName(s.UnitPrefix), Content: u.Render()}, nil
}

// systemdArgs quotes words that follow the executable of a command line.
func systemdArgs(words []string) (string, error) {
	quoted := make([]string, len(words))
	for i, w := range words {
		q, err := systemd.Arg(w)
		if err != nil {
			return "", err
		}
		quoted[i] = q
	}
	return strings.Join(quoted, " "), nil
}

// serviceUnit is the unit every launch shares but for what it runs.
func serviceUnit(c unitContext, what, execStart, order string, template bool, privileged []NamedPort) systemd.Unit {
	s := c.service
	unit := unitHead(c, what, order, template)
	var svc []systemd.Directive
	add := func(key, value, comment string) {
		svc = append(svc, systemd.Directive{Key: key, Value: value, Comment: comment})
	}
	add("Type", "exec", "")
	add("User", s.User, "")
	for _, kv := range [][2]string{{"HF_HOME", s.CacheDir}, {"HOME", s.CacheDir}, {"PATH", unitPath(s.VLLMPath)}} {
		e, _ := systemd.Environment(kv[0], kv[1]) // the service paths passed PlainPath
		add("Environment", e, "")
	}
	add("EnvironmentFile", "-"+s.EnvironmentFile, "Secrets (HF_TOKEN=...): never in Terraform state.")
	// Its journal lines carry the unit's name (%N), not python3 or env.
	add("SyslogIdentifier", "%N", "")
	svc = append(svc, modprobe)
	add("ExecStart", execStart, "The preflight, then vllm in its place.")
	svc = append(svc, restartPolicy...)
	add("TimeoutStartSec", strconv.Itoa(unitStartTimeout), "")
	add("TimeoutStopSec", "120", "")
	add("LimitNOFILE", "1048576", "")
	if c.rdma {
		add("LimitMEMLOCK", "infinity", "")
	}
	svc = append(svc, sandboxDirectives(s, privileged)...)
	return withService(unit, svc)
}

// modprobe makes the NVIDIA device nodes before a process starts. A host
// without nvidia-modprobe (the driver made the device nodes) exits 0
// here; a failure of one that exists is shown, and ignored.
var modprobe = systemd.Directive{Key: "ExecStartPre", Value: "+-/bin/sh -c \"! command -v nvidia-modprobe >/dev/null || nvidia-modprobe -u -c=0\""}

// restartPolicy restarts a process that fails, but not one that found the
// machine unlike the plan (the preflight's status) or whose command
// cannot run: it would meet the same again.
var restartPolicy = []systemd.Directive{
	{Key: "Restart", Value: "on-failure"},
	{Key: "RestartPreventExitStatus", Value: strconv.Itoa(PreflightExit) + " 126 127 203 216 217", Comment: "A machine unlike the plan fails once."},
	{Key: "RestartSec", Value: "10"},
}

// withService is unit with its [Service] section, svc, and its [Install]:
// every unit is wanted by multi-user.target.
func withService(unit systemd.Unit, svc []systemd.Directive) systemd.Unit {
	unit.Sections = append(unit.Sections, systemd.Section{Name: "Service", Directives: svc},
		systemd.Section{Name: "Install", Directives: []systemd.Directive{{Key: "WantedBy", Value: "multi-user.target"}}})
	return unit
}

// unitHead is the unit every launch shares up to its [Service]: its
// comment and its [Unit] section. what says what it runs, order why it
// starts when it does; template is the template of a stage-based launch.
func unitHead(c unitContext, what, order string, template bool) systemd.Unit {
	comment := fmt.Sprintf("vllm-omni %s, planned by omni_pd_pipeline for vllm-omni %s.", what, c.release)
	if template {
		comment = fmt.Sprintf("vllm-omni %s's stages, planned by omni_pd_pipeline: one instance, with its drop-in, per stage.", c.release)
	}
	head := []systemd.Directive{
		// The model first: a value that ended in a backslash would join the
		// next line.
		{Key: "Description", Value: systemd.Specifiers(c.model+": vllm-omni ") + what},
		{Key: "Documentation", Value: "https://github.com/vllm-project/vllm-omni"},
		{Key: "Wants", Value: "network-online.target"},
		{Key: "After", Value: "network-online.target", Comment: order},
	}
	if template {
		head = append(head, systemd.Directive{Key: "ConditionPathExists", Value: dropInPath(systemd.Specifiers(c.service.UnitPrefix) + "-stage@%i.service")})
	}
	return systemd.Unit{Comment: comment, Sections: []systemd.Section{{Name: "Unit", Directives: head}}}
}

// headBinding ties the head and the headless stages of one host into one
// service for the operator: the head is the handle. A headless stage
// registers with the head's master once, at start, so it must not outlive
// the head: BindsTo= stops it whenever the head stops, fails or restarts
// (PartOf= propagates only an operator's stop and restart, not a failure),
// and After= starts it once the head's process runs. The head Wants= its
// host's stages, so starting or restarting the head, by hand or by
// Restart=, brings them back; a stage that crashes alone restarts alone.
// Stages on other hosts cannot name a remote unit: their preflight waits
// for the head's master instead.
func headBinding(c unitContext, proc Process, beside []Process) []systemd.Directive {
	switch {
	case proc.Role == ProcessHead:
		var stages []string
		for _, p := range beside {
			if p.Role == ProcessHeadless {
				stages = append(stages, p.UnitName)
			}
		}
		if len(stages) == 0 {
			return nil
		}
		return []systemd.Directive{{Key: "Wants", Value: strings.Join(stages, " ")}}
	case proc.host == c.headHost:
		return []systemd.Directive{{Key: "After", Value: c.headUnit}, {Key: "BindsTo", Value: c.headUnit}}
	}
	return nil
}

// unitPath is the units' PATH: vllm's own directory first, where its
// environment keeps ninja and the other build tools, then the system's.
func unitPath(vllm string) string {
	dirs := []string{path.Dir(vllm)}
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		if d != dirs[0] {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, ":")
}

// stageDropIn renders what one stage's instance adds to the template: how
// it is bound to the head on its host, the preflight's options and the
// stage's vllm options as the words the template's ExecStart splits, the
// stage's environment, and the capability a port below 1024 needs. beside
// are the processes of its host, itself among them.
func stageDropIn(c unitContext, proc Process, beside []Process) (UnitFile, error) {
	if c.container != nil {
		return containerDropIn(c, proc, beside)
	}
	unit := systemd.Unit{}
	if deps := headBinding(c, proc, beside); len(deps) > 0 {
		unit.Sections = append(unit.Sections, systemd.Section{Name: "Unit", Directives: deps})
	}
	var svc []systemd.Directive
	for _, v := range []struct {
		name  string
		words []string
	}{{unitChecksVar, proc.checkWords}, {unitArgsVar, proc.Argv[proc.ownArgs[0]:proc.ownArgs[1]]}} {
		for _, w := range v.words {
			if !splitsAsOneWord(w) {
				return UnitFile{}, fmt.Errorf("stage %d: %q cannot pass through %s, which systemd splits at whitespace; it holds whitespace, a quote or a backslash", *proc.StageID, w, v.name)
			}
		}
		e, err := systemd.Environment(v.name, strings.Join(v.words, " "))
		if err != nil {
			return UnitFile{}, err
		}
		svc = append(svc, systemd.Directive{Key: "Environment", Value: e})
	}
	for _, k := range sortedStrings(proc.Env) {
		e, err := systemd.Environment(k, proc.Env[k])
		if err != nil {
			return UnitFile{}, err
		}
		svc = append(svc, systemd.Directive{Key: "Environment", Value: e})
	}
	if privileged := privilegedPorts(proc.Ports); len(privileged) > 0 {
		// Binding a port below 1024 takes CAP_NET_BIND_SERVICE
		// (capabilities(7)); as an ambient capability it reaches the
		// unprivileged User across the preflight's exec of vllm. The
		// template's empty sets reset them; these add the one capability.
		svc = append(svc, systemd.Directive{Key: "CapabilityBoundingSet", Value: capNetBindService,
			Comment: "Only CAP_NET_BIND_SERVICE, for " + describePorts(privileged) + ", below 1024."},
			systemd.Directive{Key: "AmbientCapabilities", Value: capNetBindService})
	}
	unit.Sections = append(unit.Sections, systemd.Section{Name: "Service", Directives: svc})
	return UnitFile{Path: dropInPath(proc.UnitName), Content: unit.Render()}, nil
}

// splitsAsOneWord is true for a word that an unbraced $NAME in a command
// line hands over as it is: no whitespace, which systemd splits at, and no
// quote or backslash, which some of its releases unquote there.
func splitsAsOneWord(w string) bool {
	return w != "" && !strings.ContainsAny(w, " \t\n\r\"'\\")
}

// sandboxDirectives are the unit's directives from the cache on: the
// directory it writes, the capabilities, then the hardening. The plan's
// paths are judged against the sandbox these declare (unitSandbox), so a
// setting added here is one the judgement reads. privileged are the ports
// below 1024 the process listens on.
func sandboxDirectives(s ServiceSpec, privileged []NamedPort) []systemd.Directive {
	var out []systemd.Directive
	if rel, ok := strings.CutPrefix(s.CacheDir, "/var/cache/"); ok && rel != "" {
		out = append(out, systemd.Directive{Key: "CacheDirectory", Value: rel, Comment: ""})
	} else {
		out = append(out, systemd.Directive{Key: "ReadWritePaths", Value: s.CacheDir, Comment: "The one place besides /dev/shm the processes write; create it owned by User."})
	}
	out = append(out, systemd.Directive{Key: "NoNewPrivileges", Value: "yes"})
	if len(privileged) == 0 {
		out = append(out, systemd.Directive{Key: "CapabilityBoundingSet", Value: ""},
			systemd.Directive{Key: "AmbientCapabilities", Value: ""})
	} else {
		// Binding a port below 1024 takes CAP_NET_BIND_SERVICE
		// (capabilities(7)); as an ambient capability it reaches the
		// unprivileged User across the preflight's exec of vllm, and the
		// bounding set holds nothing else.
		out = append(out, systemd.Directive{Key: "CapabilityBoundingSet", Value: capNetBindService,
			Comment: "Only CAP_NET_BIND_SERVICE, which User needs to listen on " + describePorts(privileged) + ", below 1024."},
			systemd.Directive{Key: "AmbientCapabilities", Value: capNetBindService})
	}
	return append(out, hardening...)
}

const capNetBindService = "CAP_NET_BIND_SERVICE"

// privilegedPorts are the ports below 1024 among a process's.
func privilegedPorts(ports []NamedPort) []NamedPort {
	var out []NamedPort
	for _, p := range ports {
		if p.Port < 1024 {
			out = append(out, p)
		}
	}
	return out
}

// describePorts names ports for a comment: "port 80 (api)".
func describePorts(ports []NamedPort) string {
	words := make([]string, len(ports))
	for i, p := range ports {
		words[i] = strconv.Itoa(p.Port) + " (" + p.Name + ")"
	}
	if len(ports) == 1 {
		return "port " + words[0]
	}
	return "ports " + strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// hardening confines the processes. The settings that stay open are what
// the GPUs need: the GPUs and RDMA NICs are devices (PrivateDevices=no),
// CUDA and Triton compile kernels at run time (MemoryDenyWriteExecute=no),
// and NCCL and vLLM share memory through /dev/shm, which ProtectSystem
// leaves writable; the machines guide's table says so beside each. The
// unit says it in as few words as it can: its bytes are in every
// pipeline's state.
var hardening = []systemd.Directive{
	{Key: "ProtectSystem", Value: "strict"},
	{Key: "ProtectHome", Value: "yes"},
	{Key: "PrivateTmp", Value: "yes"},
	{Key: "PrivateDevices", Value: "no"},
	{Key: "ProtectKernelTunables", Value: "yes"},
	{Key: "ProtectKernelModules", Value: "yes"},
	{Key: "ProtectKernelLogs", Value: "yes"},
	{Key: "ProtectControlGroups", Value: "yes"},
	{Key: "ProtectHostname", Value: "yes"},
	{Key: "ProtectProc", Value: "invisible"},
	{Key: "RestrictNamespaces", Value: "yes"},
	{Key: "RestrictRealtime", Value: "yes"},
	{Key: "RestrictSUIDSGID", Value: "yes"},
	{Key: "LockPersonality", Value: "yes"},
	{Key: "RemoveIPC", Value: "yes"},
	{Key: "KeyringMode", Value: "private"},
	{Key: "UMask", Value: "0027"},
	{Key: "SystemCallArchitectures", Value: "native"},
	{Key: "RestrictAddressFamilies", Value: "AF_UNIX AF_INET AF_INET6 AF_NETLINK"},
	{Key: "MemoryDenyWriteExecute", Value: "no"},
}

// sortedPorts lists ports by number.
func sortedPorts(ports []NamedPort) []NamedPort {
	sort.Slice(ports, func(i, j int) bool { return ports[i].Port < ports[j].Port })
	return ports
}
