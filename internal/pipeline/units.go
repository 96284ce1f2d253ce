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
}

// unitStartTimeout bounds a unit's start-up, which for Type=exec ends
// once the preflight has been executed: only nvidia-modprobe runs before
// it. The wait for the head, the checks and model loading all come after,
// in the main process, so none of them holds multi-user.target.
const unitStartTimeout = 120

// execArgv is what a unit starts: the preflight, which on a headless
// process then waits for the head's omni master (proc.wait), and execs the
// process's argv with vllm at its absolute path once the machine matches
// the plan.
func execArgv(proc Process, s ServiceSpec) []string {
	argv := append(append(append([]string{}, proc.Preflight...), proc.wait...), "--", s.VLLMPath)
	return append(argv, proc.Argv[1:]...)
}

// unitFor renders the systemd unit of one process.
func unitFor(c unitContext, proc Process) (string, error) {
	s := c.service
	execStart, err := systemdCommand(execArgv(proc, s))
	if err != nil {
		return "", err
	}
	what := "(all stages)"
	if proc.StageID != nil {
		what = fmt.Sprintf("stage %d (%s)", *proc.StageID, proc.Role)
	}
	unit := systemd.Unit{Comment: fmt.Sprintf("vllm-omni %s for %s, planned by omni_pd_pipeline for vllm-omni %s.\nThe deploy config it reads is %s.",
		what, c.model, c.release, c.config)}

	after := "network-online.target"
	if proc.Role == ProcessHeadless && proc.host == c.headHost {
		after += " " + c.headUnit
	}
	unit.Sections = append(unit.Sections, systemd.Section{Name: "Unit", Directives: []systemd.Directive{
		// The model first: a value that ended in a backslash would join the
		// next line.
		{Key: "Description", Value: systemd.Specifiers(c.model + ": vllm-omni " + what)},
		{Key: "Documentation", Value: "https://github.com/vllm-project/vllm-omni"},
		{Key: "Wants", Value: "network-online.target"},
		{Key: "After", Value: after, Comment: orderComment(proc, c)},
	}})
	if proc.Role == ProcessHeadless && proc.host == c.headHost {
		// A headless stage registers with the head's master once, at start:
		// when the head stops or restarts, so does the stage, and it waits
		// for the new master.
		unit.Sections[0].Directives = append(unit.Sections[0].Directives, systemd.Directive{Key: "PartOf", Value: c.headUnit,
			Comment: "Stopped and restarted with the head, whose omni master it registers with at start."})
	}

	var svc []systemd.Directive
	add := func(key, value, comment string) {
		svc = append(svc, systemd.Directive{Key: key, Value: value, Comment: comment})
	}
	add("Type", "exec", "")
	add("User", s.User, "A dedicated account (and its primary group); the unit never runs as root.")
	env := map[string]string{"HF_HOME": s.CacheDir, "HOME": s.CacheDir,
		"PATH": path.Dir(s.VLLMPath) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	for k, v := range proc.Env {
		env[k] = v
	}
	for i, k := range sortedStrings(env) {
		e, err := systemd.Environment(k, env[k])
		if err != nil {
			return "", err
		}
		comment := ""
		if i == 0 {
			comment = "HF_HOME is the model cache; HOME points there too, for the Triton and torch compile caches;\n" +
				"PATH starts with vllm's own directory, where its environment keeps ninja and the other build tools."
		}
		add("Environment", e, comment)
	}
	add("EnvironmentFile", "-"+s.EnvironmentFile,
		"Secrets such as HF_TOKEN=... go in this file on the machine, never in Terraform state; \"-\" lets the unit start without it.")
	add("ExecStartPre", "+-/bin/sh -c \"command -v nvidia-modprobe >/dev/null && nvidia-modprobe -u -c=0\"",
		"\"+\": with full privileges, since the unit has none; \"-\": a host without it goes on. CUDA cannot create\n"+
			"/dev/nvidia-uvm itself here (no setuid, no module loading), so it is created before the process starts.")
	main := "The preflight, then vllm in its place (exec): it checks the installed vllm-omni and vLLM and the\n" +
		"deploy config against the plan as the main process, since RestartPreventExitStatus reads only the main\n" +
		"process's status (a failed ExecStartPre would restart forever)."
	if len(proc.wait) > 0 {
		main += "\nA headless stage registers with the head's omni master, so the preflight then waits for its port, bounded,\n" +
			"and fails saying so (status 1: restarted); waiting here, the unit is started and holds no boot target."
	}
	add("ExecStart", execStart, main)
	add("Restart", "on-failure", "")
	add("RestartPreventExitStatus", strconv.Itoa(PreflightExit)+" 126 127 203 216 217",
		"A machine that does not match the plan (the preflight's status) fails once, and stays failed, with the\n"+
			"preflight's message; so does one where the executable, the group or the user is missing (systemd's 203, 216, 217),\n"+
			"or where /usr/bin/env finds no python3 on PATH or cannot run it (127, 126).")
	add("RestartSec", "10", "")
	add("TimeoutStartSec", strconv.Itoa(unitStartTimeout), "Start-up ends once the preflight runs (Type=exec): the checks, the wait for the head and model loading\n"+
		"come after it, so multi-user.target, which waits for the units it wants to start, is not held by them.")
	add("TimeoutStopSec", "120", "")
	add("LimitNOFILE", "1048576", "Every stage and connector holds many sockets and files.")
	if c.rdma {
		add("LimitMEMLOCK", "infinity", "RDMA (Mooncake over rdma, NIXL over UCX) registers the KV buffers with the NIC, which locks them in memory.")
	}
	svc = append(svc, sandboxDirectives(s, privilegedPorts(proc.Ports))...)
	unit.Sections = append(unit.Sections, systemd.Section{Name: "Service", Directives: svc})
	unit.Sections = append(unit.Sections, systemd.Section{Name: "Install", Directives: []systemd.Directive{{Key: "WantedBy", Value: "multi-user.target"}}})
	return unit.Render(), nil
}

func orderComment(proc Process, c unitContext) string {
	switch {
	case proc.StageID == nil:
		return "One process runs every stage."
	case proc.Role == ProcessHead:
		return "The head starts first; the headless stages register with it."
	case proc.host == c.headHost:
		return "After the head on this host, whose master port the preflight then waits for."
	}
	return "The head runs on " + c.masterAddress + "; the preflight waits for its master port."
}

// sandboxDirectives are the unit's directives from the cache on: the
// directory it writes, the capabilities, then the hardening. The plan's
// paths are judged against the sandbox these declare (unitSandbox), so a
// setting added here is one the judgement reads. privileged are the ports
// below 1024 the process listens on.
func sandboxDirectives(s ServiceSpec, privileged []NamedPort) []systemd.Directive {
	var out []systemd.Directive
	if rel, ok := strings.CutPrefix(s.CacheDir, "/var/cache/"); ok && rel != "" {
		out = append(out, systemd.Directive{Key: "CacheDirectory", Value: rel, Comment: "Created and owned for User; the one place besides /dev/shm the processes write."})
	} else {
		out = append(out, systemd.Directive{Key: "ReadWritePaths", Value: s.CacheDir, Comment: "The model cache, the one place besides /dev/shm the processes write; create it owned by User."})
	}
	out = append(out, systemd.Directive{Key: "NoNewPrivileges", Value: "yes"})
	if len(privileged) == 0 {
		out = append(out, systemd.Directive{Key: "CapabilityBoundingSet", Value: "", Comment: "No capabilities at all."},
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

// hardening confines the processes. Each setting that stays open is
// commented with what needs it: the GPUs and RDMA NICs are devices, CUDA
// and Triton compile kernels at run time, and NCCL and vLLM share memory
// through /dev/shm.
var hardening = []systemd.Directive{
	{Key: "ProtectSystem", Value: "strict", Comment: "/dev stays writable: /dev/shm is how NCCL and vLLM's workers share memory."},
	{Key: "ProtectHome", Value: "yes"},
	{Key: "PrivateTmp", Value: "yes"},
	{Key: "PrivateDevices", Value: "no", Comment: "The GPUs (/dev/nvidia*) and RDMA NICs (/dev/infiniband) are devices."},
	{Key: "ProtectKernelTunables", Value: "yes"},
	{Key: "ProtectKernelModules", Value: "yes"},
	{Key: "ProtectKernelLogs", Value: "yes"},
	{Key: "ProtectControlGroups", Value: "yes", Comment: "ProtectClock stays off: it implies DeviceAllow=char-rtc, which would close every other device, the GPUs too."},
	{Key: "ProtectHostname", Value: "yes"},
	{Key: "ProtectProc", Value: "invisible"},
	{Key: "RestrictNamespaces", Value: "yes"},
	{Key: "RestrictRealtime", Value: "yes"},
	{Key: "RestrictSUIDSGID", Value: "yes"},
	{Key: "LockPersonality", Value: "yes"},
	{Key: "RemoveIPC", Value: "yes"},
	{Key: "KeyringMode", Value: "private"},
	{Key: "UMask", Value: "0027"},
	{Key: "SystemCallArchitectures", Value: "native", Comment: "No SystemCallFilter: the GPU drivers' user-space libraries make calls that vary by driver release."},
	{Key: "RestrictAddressFamilies", Value: "AF_UNIX AF_INET AF_INET6 AF_NETLINK", Comment: "TCP and ZMQ between stages; netlink for NCCL's and the RDMA stack's interface lookups."},
	{Key: "MemoryDenyWriteExecute", Value: "no", Comment: "CUDA, Triton and torch.compile write and run machine code at run time."},
}

// sortedPorts lists ports by number.
func sortedPorts(ports []NamedPort) []NamedPort {
	sort.Slice(ports, func(i, j int) bool { return ports[i].Port < ports[j].Port })
	return ports
}
