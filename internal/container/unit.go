package container

import (
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// Directives are what a unit that runs a container needs beside what
// every unit of the plan has, by section.
type Directives struct {
	// Unit is what must run or be mounted before the runtime can start a
	// container.
	Unit []systemd.Directive
	// Service is how the unit starts, tracks and stops the container: its
	// Type, ExecStart and stop commands, and the stop timeout they need.
	// The unit must not set those itself.
	Service []systemd.Directive
}

// stopGrace is what TimeoutStopSec= adds to the container's stop timeout
// for the runtime's own work, as `podman generate systemd` (4.3) does
// (TimeoutStopSec=170 for a stop timeout of 110).
const stopGrace = 60

// UnitDirectives are s's unit's directives for its runtime. Podman's are
// those `podman generate systemd --new` (4.3.1) writes for a container
// (read from its output, not copied): Type=notify with NotifyAccess=all,
// since conmon, not the podman that systemd started, sends MAINPID and
// READY=1; the container's ID file removed before the start and the
// container stopped and removed by it; PODMAN_SYSTEMD_UNIT for podman to
// label the container with its unit. Its ExecStopPost= may fail: podman
// 4.3.1's rm --ignore ends with status 125 when the ID file is missing
// ("reading CIDFile"), as after a run that failed before it made the
// container (a failed pull). The container runs in the
// foreground (the generator adds -d): podman's output is the unit's, so
// the container's lines reach the journal under the unit whatever
// podman's log driver, and conmon exits with the container's status
// either way (measured with podman 4.3.1: 78 from the command, through
// MAINPID). Docker's container lives under dockerd, not in the unit's
// cgroup: the unit is Type=exec with the client in the foreground (it
// exits with the container's status), removes a container of its name
// left by a run the unit did not see end, and stops the container through
// the daemon, since stopping the client would leave it running.
func UnitDirectives(s Spec) (Directives, error) {
	start, err := ExecStart(s)
	if err != nil {
		return Directives{}, err
	}
	timeout := strconv.Itoa(s.StopTimeout + stopGrace)
	d := func(key, value, comment string) systemd.Directive {
		return systemd.Directive{Key: key, Value: value, Comment: comment}
	}
	if s.Runtime == Podman {
		stop, err := commandLine(s.RuntimePath, stopWords(s))
		if err != nil {
			return Directives{}, err
		}
		remove, err := commandLine(s.RuntimePath, removeWords(s))
		if err != nil {
			return Directives{}, err
		}
		return Directives{
			Unit: []systemd.Directive{d("RequiresMountsFor", "%t/containers", "")},
			Service: []systemd.Directive{
				d("Environment", "PODMAN_SYSTEMD_UNIT=%n", ""),
				d("Type", "notify", "conmon tells systemd the container's main PID and that it runs."),
				d("NotifyAccess", "all", ""),
				d("ExecStartPre", "/bin/rm -f "+cidFile(s.Unit).unit, ""),
				d("ExecStart", start, "The preflight, then vllm, in the image."),
				d("ExecStop", stop, ""),
				d("ExecStopPost", "-"+remove, "After a run that made no container, there is no ID file to remove it by."),
				d("TimeoutStopSec", timeout, ""),
			},
		}, nil
	}
	remove, err := commandLine(s.RuntimePath, words("rm", "--force", s.Name))
	if err != nil {
		return Directives{}, err
	}
	stop, err := commandLine(s.RuntimePath, stopWords(s))
	if err != nil {
		return Directives{}, err
	}
	return Directives{
		Unit: []systemd.Directive{d("Requires", "docker.service", ""), d("After", "docker.service", "")},
		Service: []systemd.Directive{
			d("Type", "exec", ""),
			d("ExecStartPre", "-"+remove, "A container of this name left by a run that did not end here."),
			d("ExecStart", start, "The preflight, then vllm, in the image."),
			d("ExecStop", stop, "The container lives under dockerd: stop it there."),
			d("TimeoutStopSec", timeout, ""),
		},
	}, nil
}

// stopWords stop s's container, waiting StopTimeout seconds after SIGTERM
// before killing it. Podman's reaches the container by the unit's ID file
// and ignores one already gone (podman-stop(1) 4.3: --ignore, --time,
// --cidfile). Docker's names the container; its -t is --time up to Docker
// 24 (Debian 12's docker.io is 20.10) and --timeout from 25 on, where
// --time prints a deprecation warning (docker stop --help, 28.2).
func stopWords(s Spec) []word {
	t := strconv.Itoa(s.StopTimeout)
	if s.Runtime == Podman {
		return append(words("stop", "--ignore", "--time", t), withPrefix("--cidfile=", cidFile(s.Unit)))
	}
	return words("stop", "-t", t, s.Name)
}

// removeWords remove s's container, stopping it first when it still runs
// (podman-rm(1) 4.3: --time needs --force). Docker's --rm removes its own.
func removeWords(s Spec) []word {
	if s.Runtime == Podman {
		return append(words("rm", "--force", "--ignore", "--time", strconv.Itoa(s.StopTimeout)), withPrefix("--cidfile=", cidFile(s.Unit)))
	}
	return words("rm", "--force", s.Name)
}

// StopArgv is the argv that stops s's container, as the runtime receives
// it (ExecStop=).
func StopArgv(s Spec) []string { return argv(s.RuntimePath, stopWords(s)) }

// RemoveArgv is the argv that removes s's container whether it runs or
// not (podman's ExecStopPost=, docker's ExecStartPre=).
func RemoveArgv(s Spec) []string { return argv(s.RuntimePath, removeWords(s)) }

func argv(executable string, ws []word) []string {
	a := []string{executable}
	for _, w := range ws {
		a = append(a, w.arg)
	}
	return a
}

// The statuses `docker run` and `podman run` end with for failures of
// their own, after chroot(1) (podman-run(1) 4.3 and docker run's
// reference, "Exit Status"); any other status is the container's command's.
const (
	// ExitRuntimeError is the runtime's own error: among others a pull
	// that failed, which a later start may not, so a unit restarts after
	// it. (Under --init the init runs the command: a command the image
	// lacks ends the init with its own status, 1 with podman 4.3.1's
	// catatonit, which restarts too.)
	ExitRuntimeError = 125
	// ExitCannotInvoke is a command the image holds but cannot execute.
	ExitCannotInvoke = 126
	// ExitNotFound is a command the image does not hold.
	ExitNotFound = 127
)

// NameFor is the container name for a unit: its name without the
// .service suffix, with "-" for each character a container name cannot
// hold (both runtimes take [a-zA-Z0-9][a-zA-Z0-9_.-]*): "@" of a
// template's instance among them (omni-stage@0.service: omni-stage-0).
func NameFor(unit string) string {
	name := strings.TrimSuffix(unit, ".service")
	return strings.Map(func(r rune) rune {
		if nameChar(r) {
			return r
		}
		return '-'
	}, name)
}

func nameChar(r rune) bool {
	return r == '_' || r == '.' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}
