package pipeline

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/shellquote"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// PreflightExit is the status the preflight exits with when the machine
// does not match the plan. The units list it in RestartPreventExitStatus, so
// a drifted machine fails once, clearly, instead of restarting forever.
const PreflightExit = 78 // EX_CONFIG

// preflightSource checks, in the Python that runs vllm, that the installed
// vllm-omni is the release the plan is for, that its vLLM is the major.minor
// that release needs, and that the deploy config is the plan's, by SHA-256.
// Arguments: the version as the user gave it, "line" or "release", the
// vLLM line, the config path and its SHA-256; then, optionally, `--` and
// the command to exec once everything matches. Versions are read from the
// installed distributions' metadata (importlib.metadata), so nothing is
// imported from vllm itself.
const preflightSource = `import hashlib, os, re, sys
from importlib import metadata
STATUS = 78
def say(kind, msg):
    sys.stderr.write("vllm-omni preflight: %s: %s\n" % (kind, msg))
def fail(msg):
    say("error", msg)
    sys.exit(STATUS)
want, mode, want_vllm, path, want_sha = sys.argv[1:6]
rest = sys.argv[6:]
if rest and rest[0] == "--":
    rest = rest[1:]
PEP440 = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?((?:a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[A-Za-z0-9.]+)?$", re.I)
def installed(name):
    try:
        v = metadata.version(name)
    except metadata.PackageNotFoundError:
        v = None
    if not v:
        fail("%s is not installed for %s; this machine was planned for vllm-omni %s with vLLM %s: install them into that Python" % (name, sys.executable, want, want_vllm))
    return v
def parts(v, name):
    m = PEP440.match(v)
    if not m:
        fail("%s %s is not a version this check reads" % (name, v))
    return m
omni = installed("vllm-omni")
m = parts(omni, "vllm-omni")
line = m.group(1) + "." + m.group(2)
base = line + "." + (m.group(3) or "0")
extra = "".join(g for g in m.group(5, 6, 7) if g)
if mode == "line":
    if line != want:
        fail("vllm-omni %s is installed, but the plan is for the %s line; install vllm-omni==%s.* or set vllm_omni_version = \"%s\" and plan again" % (omni, want, want, line))
    if m.group(4) or extra:
        say("warning", "vllm-omni %s is a pre-release or local build of the %s line" % (omni, want))
else:
    w = parts(want, "the planned release")
    wbase = w.group(1) + "." + w.group(2) + "." + (w.group(3) or "0")
    same = base == wbase and (m.group(4) or "").lower() == (w.group(4) or "").lower()
    rc_of_final = base == wbase and not w.group(4) and m.group(4)
    if not (same or rc_of_final):
        fail("vllm-omni %s is installed, but the plan is for vllm-omni %s; install vllm-omni==%s or set vllm_omni_version = \"%s\" and plan again" % (omni, want, want, omni))
    if rc_of_final or extra:
        say("warning", "vllm-omni %s is a pre-release, post-release or local build of %s" % (omni, want))
vllm = installed("vllm")
v = parts(vllm, "vLLM")
if v.group(1) + "." + v.group(2) != want_vllm:
    fail("vLLM %s is installed, but vllm-omni %s needs vLLM %s.x (a major.minor skew fails at import); install vllm==%s.*" % (vllm, want, want_vllm, want_vllm))
try:
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
except OSError as e:
    fail("the deploy config %s cannot be read (%s); write the plan's config_yaml there" % (path, e.strerror))
if sha != want_sha:
    fail("the deploy config %s has SHA-256 %s, but the plan's config_sha256 is %s: the machine holds another plan's config; write this plan's config_yaml there, or replace the machine" % (path, sha, want_sha))
if rest:
    # The check is worth only as much as the Python it ran in: it must be
    # the one vllm runs in.
    try:
        with open(rest[0], "rb") as f:
            head = f.readline(512)
    except OSError as e:
        fail("%s cannot be read (%s); set systemd.vllm_path to the vllm executable" % (rest[0], e.strerror))
    if head.startswith(b"#!"):
        interp = head[2:].strip().split(b" ")[0].decode(errors="replace")
        if not interp.endswith("/env") and os.path.realpath(interp) != os.path.realpath(sys.executable):
            fail("%s runs in %s, but this check ran in %s; set systemd.python_path to %s" % (rest[0], interp, sys.executable, interp))
    try:
        os.execv(rest[0], rest)
    except OSError as e:
        fail("%s cannot be started (%s); set systemd.vllm_path to the vllm executable" % (rest[0], e.strerror))
say("ok", "vllm-omni %s, vLLM %s and %s match the plan" % (omni, vllm, path))
`

// preflightScript is the source as one line, for `python3 -c`.
var preflightScript = oneLinePython(preflightSource)

// The script is the same in every plan, and so are its quoted forms: the
// shell word in preflight_command and the systemd argument in each unit's
// ExecStart. Quoting its 4 KB anew for every process took a tenth of a
// plan's time.
var (
	preflightScriptShell                          = shellquote.Quote(preflightScript)
	preflightScriptSystemd, preflightScriptSysErr = systemd.Arg(preflightScript)
)

// scriptAt is the index of the preflight script in argv, or -1. The
// script comes after the Python and "-c", never first.
func scriptAt(argv []string) int {
	for i := 1; i < len(argv); i++ {
		if len(argv[i]) == len(preflightScript) && argv[i] == preflightScript {
			return i
		}
	}
	return -1
}

// shellJoin is ShellJoin(argv), with the preflight script's word, if argv
// holds the script, taken as quoted once.
func shellJoin(argv []string) string {
	i := scriptAt(argv)
	if i < 0 {
		return ShellJoin(argv)
	}
	var b strings.Builder
	b.WriteString(ShellJoin(argv[:i]))
	b.WriteByte(' ')
	b.WriteString(preflightScriptShell)
	for _, w := range argv[i+1:] {
		b.WriteByte(' ')
		b.WriteString(shellquote.Quote(w))
	}
	return b.String()
}

// systemdCommand is systemd.Command(argv), with the preflight script's
// argument, if argv holds the script, taken as quoted once. It returns the
// error Command would: the first argument that fails, in order.
func systemdCommand(argv []string) (string, error) {
	i := scriptAt(argv)
	if i < 0 || preflightScriptSysErr != nil {
		return systemd.Command(argv)
	}
	head, err := systemd.Command(argv[:i])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteByte(' ')
	b.WriteString(preflightScriptSystemd)
	for _, a := range argv[i+1:] {
		w, err := systemd.Arg(a)
		if err != nil {
			return "", err
		}
		b.WriteByte(' ')
		b.WriteString(w)
	}
	return b.String(), nil
}

// oneLinePython wraps Python source in exec("..."), one line: a unit's
// command line holds no newline. A JSON string is a Python string literal.
func oneLinePython(src string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(src) // a string always encodes
	return "exec(" + strings.TrimSpace(b.String()) + ")"
}

// preflightArgv is the check for one machine: the Python that runs vllm,
// the script and what the plan expects.
func (lp launchPlan) preflightArgv() []string {
	want, mode := lp.release.Version, "release"
	if v := lp.asked; v != "" {
		if parsed, err := releases.ParseVersion(v); err == nil && !parsed.HasPatch {
			want, mode = v, "line"
		}
	}
	return []string{lp.service.PythonPath, "-c", preflightScript, want, mode, lp.release.VLLM, lp.configPath, lp.configSHA}
}
