package container

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// An option is one flag of a user's run options, as the runtimes' flag
// parser (spf13/pflag, in both) reads it.
type option struct {
	index int    // the flag's word in Options
	name  string // its long name, without dashes
	value string
	// valued is whether the flag took a value, attached or the next word.
	valued bool
}

// booleanFlags are the run flags that take no value unless attached with
// "=": the union of podman-run(1) 4.3's and `docker run --help`'s (28.2).
// Any other long flag takes the next word as its value when none is
// attached, as pflag reads it.
var booleanFlags = map[string]bool{
	"detach": true, "disable-content-trust": true, "env-host": true, "help": true, "http-proxy": true,
	"init": true, "interactive": true, "no-healthcheck": true, "no-hosts": true, "oom-kill-disable": true,
	"passwd": true, "privileged": true, "publish-all": true, "quiet": true, "read-only": true,
	"read-only-tmpfs": true, "replace": true, "rm": true, "rmi": true, "rootfs": true, "sig-proxy": true,
	"tls-verify": true, "tty": true, "unsetenv-all": true, "use-api-socket": true,
}

// shortFlags are the one-letter run flags both runtimes know, by their
// long names; valuedShort those of them that take a value.
var (
	shortFlags = map[byte]string{
		'a': "attach", 'c': "cpu-shares", 'd': "detach", 'e': "env", 'h': "hostname", 'i': "interactive",
		'l': "label", 'm': "memory", 'p': "publish", 'P': "publish-all", 'q': "quiet", 't': "tty",
		'u': "user", 'v': "volume", 'w': "workdir",
	}
	valuedShort = "acehlmpuvw"
)

// flagAliases are long names one runtime takes for another's.
var flagAliases = map[string]string{"net": "network"}

// parseOptions reads options as the runtimes would: flags, each with its
// value, and the index of each word that is no flag's (before the image a
// runtime would take it for the image) or a flag missing its value.
func parseOptions(words []string) (opts []option, stray []int, unfinished []int) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "--") && len(w) > 2:
			name, value, attached := strings.Cut(w[2:], "=")
			if alias, ok := flagAliases[name]; ok {
				name = alias
			}
			o := option{index: i, name: name, value: value, valued: attached}
			if !attached && !booleanFlags[name] {
				if i+1 == len(words) {
					unfinished = append(unfinished, i)
				} else {
					i++
					o.value, o.valued = words[i], true
				}
			}
			opts = append(opts, o)
		case strings.HasPrefix(w, "-") && len(w) > 1 && w != "--":
			var more bool
			opts, more = appendShort(opts, w, i)
			if more {
				if i+1 == len(words) {
					unfinished = append(unfinished, i)
				} else {
					i++
					opts[len(opts)-1].value, opts[len(opts)-1].valued = words[i], true
				}
			}
		default:
			stray = append(stray, i)
		}
	}
	return opts, stray, unfinished
}

// appendShort reads a cluster of one-letter flags (-it, -eNAME=v, -e=v):
// letters up to the first that takes a value, which takes the rest of the
// word or, when nothing is left, the next word (more). A letter neither
// runtime knows ends the cluster.
func appendShort(opts []option, w string, index int) (_ []option, more bool) {
	for j := 1; j < len(w); j++ {
		name, known := shortFlags[w[j]]
		if !known {
			return append(opts, option{index: index, name: w[j : j+1]}), false
		}
		o := option{index: index, name: name}
		if strings.IndexByte(valuedShort, w[j]) < 0 {
			opts = append(opts, o)
			continue
		}
		if j+1 == len(w) {
			return append(opts, o), true
		}
		o.value, o.valued = strings.TrimPrefix(w[j+1:], "="), true
		return append(opts, o), false
	}
	return opts, false
}

// planned is what the plan sets that a user's option must not undo.
type planned struct {
	env     map[string]bool // variable names
	targets map[string]bool // mount targets
	spec    Spec
}

// ownedFlags are run flags the plan always sets, or whose effect it
// rules out, and why a user's option may not carry them.
var ownedFlags = map[string]string{
	"name":           "the plan names the container for its unit",
	"rm":             "the plan removes the container when it stops",
	"replace":        "the plan sets podman's flags for running under systemd",
	"cidfile":        "the plan sets podman's flags for running under systemd",
	"cgroups":        "the plan sets podman's flags for running under systemd",
	"sdnotify":       "the plan sets podman's flags for running under systemd",
	"conmon-pidfile": "the plan sets podman's flags for running under systemd",
	"detach":         "the unit runs the container in the foreground to supervise it",
	"restart":        "systemd restarts the unit; a runtime's restart policy would compete with it",
	"pull":           "the pull policy is the container's pull setting",
	"init":           "the plan runs every container under the runtime's init",
	"entrypoint":     "the image has no entrypoint and the command is the plan's: the preflight, then vllm",
	"network":        "the stages find each other on the machine's network (--network host)",
	"ipc":            "stages on one host share the machine's /dev/shm (--ipc host)",
	"shm-size":       "with --ipc host the container uses the machine's /dev/shm, whatever size it asks",
	"gpus":           "the plan asks for exactly the process's GPUs",
	"privileged":     "it hands the container every device of the machine, every GPU among them",
}

// hostNetworkFlags are flags that configure a network of the container's
// own, which --network host leaves it without.
var hostNetworkFlags = []string{"publish", "publish-all", "hostname", "mac-address", "ip", "ip6", "network-alias", "dns", "dns-option", "dns-search", "link"}

// gpuDevice is a --device value that gives the container a GPU: an
// NVIDIA CDI device or a GPU's device node.
var gpuDevice = regexp.MustCompile(`^(?:` + regexp.QuoteMeta(cdiKind) + `=|/dev/nvidia[0-9]+(?::|$))`)

// conflict is why option o undoes what the plan sets, "" when it does
// not.
func (p planned) conflict(o option) string {
	if off, err := strconv.ParseBool(o.value); booleanFlags[o.name] && o.valued && err == nil && !off {
		return "" // --privileged=false, as pflag reads a boolean
	}
	if why, ok := ownedFlags[o.name]; ok {
		return why
	}
	if slices.Contains(hostNetworkFlags, o.name) {
		return "the container has the machine's network (--network host), where this does not apply"
	}
	switch o.name {
	case "runtime":
		if p.spec.GPUMode == NVIDIARuntime {
			return "the plan asks for the GPUs with --runtime nvidia"
		}
	case "device":
		if gpuDevice.MatchString(o.value) {
			return "the plan asks for exactly the process's GPUs"
		}
	case "env":
		if name, _, _ := strings.Cut(o.value, "="); p.env[name] || gpuVariables[name] != "" {
			return "the plan sets " + name
		}
	case "volume", "mount", "tmpfs":
		if t := optionTarget(o); p.targets[t] || t == shmPath {
			return "the plan mounts " + t
		}
	case "ulimit":
		if strings.HasPrefix(o.value, "nofile=") && p.spec.NoFile > 0 || strings.HasPrefix(o.value, "memlock=") && p.spec.RDMA {
			return "the plan sets this limit"
		}
	}
	return ""
}

// shmPath is where the stages share memory: the machine's, with --ipc
// host, which a mount there would hide.
const shmPath = "/dev/shm"

// optionTarget is the path in the container a mount option mounts at,
// normalized: --volume SOURCE:TARGET[:OPTIONS], --mount
// ...,target=TARGET,... (or destination=, dst=), --tmpfs
// TARGET[:OPTIONS].
func optionTarget(o option) string {
	if t := rawTarget(o); strings.HasPrefix(t, "/") {
		return path.Clean(t)
	}
	return ""
}

func rawTarget(o option) string {
	switch o.name {
	case "volume":
		parts := strings.Split(o.value, ":")
		if len(parts) >= 2 {
			return parts[1]
		}
		return parts[0] // an anonymous volume at this path
	case "mount":
		for _, kv := range strings.Split(o.value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "target" || k == "destination" || k == "dst" {
				return v
			}
		}
		return ""
	}
	target, _, _ := strings.Cut(o.value, ":")
	return target
}
