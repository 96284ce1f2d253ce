package systemd

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Access is what a process needs of a path.
type Access int

const (
	// Read is reading a file or a directory, or executing a program.
	Read Access = iota
	// Write is creating and writing files below a directory, and finding
	// them there the next time the unit starts.
	Write
)

// effect is what a sandbox setting does to the paths at and below a root.
type effect int

const (
	readOnly effect = iota + 1 // visible, not writable
	writable                   // visible and writable
	private                    // an empty directory of the unit's own, discarded at stop
	hidden                     // inaccessible
	wiped                      // writable, but the unit user's files are removed at stop
)

// mount is one root a setting puts an effect on, and the setting, as
// written in the unit, that does it.
type mount struct {
	root    string
	effect  effect
	setting string
}

// Sandbox is the file system a unit's processes see, as its directives
// declare it (systemd.exec(5), "Sandboxing"): what is hidden, what is an
// empty directory of the unit's own, what is read-only and what is
// writable. SandboxOf reads it from the directives the unit renders, so the
// judgement of a path and the unit cannot disagree.
type Sandbox struct {
	mounts []mount
	// strict is ProtectSystem=strict: all of / read-only but the API file
	// systems and the writable roots.
	strict string
}

// The settings SandboxOf reads, and the roots systemd.exec(5) (systemd
// 252) gives each.
var (
	protectHomeRoots = []string{"/home", "/root", "/run/user"}
	privateTmpRoots  = []string{"/tmp", "/var/tmp"}
	// ProtectSystem=yes and full; strict is all of / but the API file
	// systems.
	protectSystemYes  = []string{"/usr", "/boot", "/efi"}
	protectSystemFull = []string{"/usr", "/boot", "/efi", "/etc"}
	apiFileSystems    = []string{"/dev", "/proc", "/sys"}
	// ProtectKernelTunables=yes: read-only, and two files hidden.
	kernelTunablesReadOnly = []string{"/proc/sys", "/sys", "/proc/sysrq-trigger", "/proc/latency_stats",
		"/proc/acpi", "/proc/timer_stats", "/proc/fs", "/proc/irq"}
	kernelTunablesHidden = []string{"/proc/kallsyms", "/proc/kcore"}
	// ProtectKernelModules=yes hides the modules; the page names
	// /usr/lib/modules, and /lib/modules is the same directory on a merged
	// /usr and the old place otherwise.
	kernelModulesHidden = []string{"/usr/lib/modules", "/lib/modules"}
	kernelLogsHidden    = []string{"/proc/kmsg", "/dev/kmsg"}
	// RemoveIPC=yes removes, when the last unit or session of its user
	// stops (systemd.exec(5)), the POSIX shared memory and message queues
	// that user owns: every file of that user below /dev/shm
	// (src/shared/clean-ipc.c, clean_posix_shm_internal, which descends
	// into directories) and /dev/mqueue.
	removeIPCRoots = []string{"/dev/shm", "/dev/mqueue"}
	// The directories systemd creates and opens for writing, relative to
	// these (systemd.exec(5), table 2, system units).
	directoryRoots = map[string]string{
		"RuntimeDirectory": "/run", "StateDirectory": "/var/lib", "CacheDirectory": "/var/cache",
		"LogsDirectory": "/var/log", "ConfigurationDirectory": "/etc",
	}
)

// noFileSystemEffect are the settings that change nothing about which
// paths a process of the unit can read or write. Every other setting is
// either read by SandboxOf or refused by it, so a setting added to the
// units cannot escape the judgement of their paths.
var noFileSystemEffect = map[string]bool{
	"Type": true, "User": true, "Group": true, "Environment": true, "SyslogIdentifier": true,
	// Read by the service manager, before the sandbox is set up
	// (systemd.exec(5), EnvironmentFile=).
	"EnvironmentFile": true,
	"ExecStartPre":    true, "ExecStart": true, "ExecStartPost": true, "ExecStop": true, "ExecReload": true,
	"Restart": true, "RestartPreventExitStatus": true, "RestartSec": true, "SuccessExitStatus": true,
	"TimeoutStartSec": true, "TimeoutStopSec": true, "LimitNOFILE": true, "LimitMEMLOCK": true,
	"NoNewPrivileges": true, "CapabilityBoundingSet": true, "AmbientCapabilities": true,
	"ProtectHostname": true, "RestrictNamespaces": true, "RestrictRealtime": true, "RestrictSUIDSGID": true,
	"LockPersonality": true, "KeyringMode": true, "UMask": true, "SystemCallArchitectures": true,
	"RestrictAddressFamilies": true, "MemoryDenyWriteExecute": true,
	// ProtectProc= hides other users' processes below /proc; no path the
	// units are given is there.
	"ProtectProc": true,
}

// SandboxOf reads a unit's sandbox from its [Service] directives. A
// directive that changes the file system the processes see in a way this
// reader does not know (TemporaryFileSystem=, BindPaths=, RootDirectory=,
// ...) is an error: a path could not be judged against it.
func SandboxOf(directives []Directive) (Sandbox, error) {
	var s Sandbox
	for _, d := range directives {
		read, ok := sandboxReaders[d.Key]
		if !ok {
			if !noFileSystemEffect[d.Key] {
				return Sandbox{}, fmt.Errorf("%s changes what the processes see of the file system in a way SandboxOf does not read", d.Key)
			}
			continue
		}
		if err := read(&s, d); err != nil {
			return Sandbox{}, err
		}
	}
	return s, nil
}

// A sandboxReader adds what one directive does to the sandbox, or says
// why it cannot.
type sandboxReader func(s *Sandbox, d Directive) error

// sandboxReaders read the settings SandboxOf knows, one each.
var sandboxReaders = map[string]sandboxReader{
	"ProtectSystem": readProtectSystem,
	"ProtectHome":   readProtectHome,
	"PrivateTmp":    whenOn(roots{privateTmpRoots, private}),
	// A /dev of pseudo devices only: a path below it is not the host's.
	"PrivateDevices":        whenOn(roots{[]string{"/dev"}, private}),
	"ProtectKernelTunables": whenOn(roots{kernelTunablesReadOnly, readOnly}, roots{kernelTunablesHidden, hidden}),
	"ProtectKernelModules":  whenOn(roots{kernelModulesHidden, hidden}),
	"ProtectKernelLogs":     whenOn(roots{kernelLogsHidden, hidden}),
	"ProtectControlGroups":  whenOn(roots{[]string{"/sys/fs/cgroup"}, readOnly}),
	"RemoveIPC":             whenOn(roots{removeIPCRoots, wiped}),
	"ReadWritePaths":        listedPaths(writable),
	"ReadOnlyPaths":         listedPaths(readOnly),
	"InaccessiblePaths":     listedPaths(hidden),
	// RuntimeDirectory= is removed when the unit stops.
	"RuntimeDirectory":       directories(private),
	"StateDirectory":         directories(writable),
	"CacheDirectory":         directories(writable),
	"LogsDirectory":          directories(writable),
	"ConfigurationDirectory": directories(writable),
}

// add puts effect e on every root, as setting does.
func (s *Sandbox) add(roots []string, e effect, setting string) {
	for _, r := range roots {
		s.mounts = append(s.mounts, mount{root: r, effect: e, setting: setting})
	}
}

// setting is the directive as the unit writes it.
func setting(d Directive) string { return d.Key + "=" + d.Value }

func readProtectSystem(s *Sandbox, d Directive) error {
	on, isBool := parseBool(d.Value)
	switch {
	case d.Value == "strict":
		s.strict = setting(d)
	case d.Value == "full":
		s.add(protectSystemFull, readOnly, setting(d))
	case isBool && on:
		s.add(protectSystemYes, readOnly, setting(d))
	case !isBool:
		return fmt.Errorf("%s is not a value SandboxOf reads", setting(d))
	}
	return nil
}

func readProtectHome(s *Sandbox, d Directive) error {
	on, isBool := parseBool(d.Value)
	switch {
	case isBool && on:
		s.add(protectHomeRoots, hidden, setting(d))
	case d.Value == "read-only":
		s.add(protectHomeRoots, readOnly, setting(d))
	case d.Value == "tmpfs":
		s.add(protectHomeRoots, private, setting(d))
	case !isBool || on:
		return fmt.Errorf("%s is not a value SandboxOf reads", setting(d))
	}
	return nil
}

// roots are the paths a setting puts one effect on.
type roots struct {
	paths  []string
	effect effect
}

// whenOn reads a boolean setting that puts each of rs on its roots when
// it is on, and nothing when it is off.
func whenOn(rs ...roots) sandboxReader {
	return func(s *Sandbox, d Directive) error {
		on, isBool := parseBool(d.Value)
		if !isBool {
			return fmt.Errorf("%s=%s is not a boolean", d.Key, d.Value)
		}
		if !on {
			return nil
		}
		for _, r := range rs {
			s.add(r.paths, r.effect, setting(d))
		}
		return nil
	}
}

// listedPaths reads a setting that lists absolute paths and puts e on
// each.
func listedPaths(e effect) sandboxReader {
	return func(s *Sandbox, d Directive) error {
		for _, p := range strings.Fields(d.Value) {
			// "-": ignored when missing; either way the path has the
			// effect when it is there.
			p = strings.TrimPrefix(p, "-")
			if err := PlainPath(p); err != nil {
				return fmt.Errorf("%s: %v", setting(d), err)
			}
			s.add([]string{p}, e, setting(d))
		}
		return nil
	}
}

// directories reads a setting that names directories systemd creates, and
// opens for writing, below its root (directoryRoots), and puts e on each.
func directories(e effect) sandboxReader {
	return func(s *Sandbox, d Directive) error {
		root := directoryRoots[d.Key]
		for _, rel := range strings.Fields(d.Value) {
			p := path.Join(root, rel)
			if strings.HasPrefix(rel, "/") || path.Clean(rel) != rel || !strings.HasPrefix(p, root+"/") {
				return fmt.Errorf("%s: %q is not a relative path below %s", setting(d), rel, root)
			}
			s.add([]string{p}, e, setting(d))
		}
		return nil
	}
}

// parseBool reads a systemd boolean (systemd.syntax(7)).
func parseBool(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "1", "yes", "y", "true", "t", "on":
		return true, true
	case "0", "no", "n", "false", "f", "off":
		return false, true
	}
	return false, false
}

// under reports whether p is root or below it.
func under(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// Denial is why a sandbox stops a process from the access it needs to a
// path: the setting, as the unit writes it, and what it does there.
type Denial struct {
	Setting string // such as "ProtectHome=yes"
	Root    string // the directory it applies to, such as /home
	Reason  string // what it does to Root, such as "makes inaccessible"
}

// Judge says what of the sandbox stops a process of the unit from the
// access it needs to p, an absolute, normalized path; nil when nothing
// does. What no mount can be nested in (a hidden or private directory)
// decides first; otherwise the deepest root that concerns p, as systemd
// applies its mounts from the shortest path to the longest.
func (s Sandbox) Judge(p string, need Access) *Denial {
	for _, e := range []effect{hidden, private} {
		for _, m := range s.mounts {
			if m.effect == e && under(p, m.root) {
				return m.deny()
			}
		}
	}
	var deepest *mount
	for i, m := range s.mounts {
		if (m.effect == readOnly || m.effect == writable) && under(p, m.root) && (deepest == nil || len(m.root) >= len(deepest.root)) {
			deepest = &s.mounts[i]
		}
	}
	if need == Read {
		return nil
	}
	switch {
	case deepest != nil && deepest.effect == readOnly:
		return deepest.deny()
	case deepest == nil && s.strict != "" && !slices.ContainsFunc(apiFileSystems, func(r string) bool { return under(p, r) }):
		return &Denial{Setting: s.strict, Root: "/", Reason: "makes read-only, but for the directories the unit opens for writing"}
	}
	for _, m := range s.mounts {
		if m.effect == wiped && under(p, m.root) {
			return m.deny()
		}
	}
	return nil
}

func (m mount) deny() *Denial {
	reason := map[effect]string{
		readOnly: "makes read-only",
		private:  "replaces with an empty directory of the unit's own, removed when it stops",
		hidden:   "makes inaccessible",
		wiped:    "empties of its user's files whenever the unit stops",
	}[m.effect]
	return &Denial{Setting: m.setting, Root: m.root, Reason: reason}
}

// Roots lists, for tests and documentation, the roots a sandbox gives an
// effect, each with the setting that does it: those hidden, those private
// to the unit, those read-only, those writable and those wiped at stop.
func (s Sandbox) Roots() (hiddenRoots, privateRoots, readOnlyRoots, writableRoots, wipedRoots []string) {
	for _, m := range s.mounts {
		switch m.effect {
		case hidden:
			hiddenRoots = append(hiddenRoots, m.root)
		case private:
			privateRoots = append(privateRoots, m.root)
		case readOnly:
			readOnlyRoots = append(readOnlyRoots, m.root)
		case writable:
			writableRoots = append(writableRoots, m.root)
		case wiped:
			wipedRoots = append(wipedRoots, m.root)
		}
	}
	return
}

// Strict reports whether the sandbox makes all of / read-only but for its
// writable roots and the API file systems (ProtectSystem=strict).
func (s Sandbox) Strict() bool { return s.strict != "" }
