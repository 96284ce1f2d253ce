import hashlib, importlib, importlib.util, json, os, re, shlex, shutil, socket, subprocess, sys, time, urllib.error, urllib.request
from importlib import metadata
STATUS = 78
UNIT_WORDS = ("OMNI_PD_CHECKS", "OMNI_PD_STAGE_ARGS")
def say(kind, msg):
    sys.stderr.write("vllm-omni preflight: %s: %s\n" % (kind, msg))
def fail(msg):
    say("error", msg)
    sys.exit(STATUS)
# The plan's own endpoints are reached directly: a host's http_proxy or
# https_proxy (urllib reads them by default) would send the request to a
# proxy that cannot reach the head, or answers for it, and a serving head
# would be reported not ready.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
def check_ready(url, model):
    # Passes when the models URL lists the model; each try is bounded by
    # ten seconds.
    try:
        ids = [m.get("id") for m in json.load(DIRECT.open(url, timeout=10)).get("data", [])]
    except Exception as e:
        return False, "%s: %s" % (url, e)
    if model not in ids:
        return False, "%s lists %s, not %s" % (url, ids or "no model", model)
    return True, "%s serves %s" % (url, model)
def check_smoke(url, model, unit):
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Reply with one word."}], "max_tokens": 1, "modalities": ["text"]}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    hint = " (if prefill could not hand its KV cache to decode, journalctl -u %s shows [Orchestrator][PD] Missing prefill kv_transfer_params)" % unit
    try:
        reply = json.load(DIRECT.open(req, timeout=300))
    except urllib.error.HTTPError as e:
        text = e.read().decode(errors="replace")[:500]
        pd = any(s in text for s in ("remote_request_id", "[PD]", "Orchestrator died"))
        return False, "%s answered %d%s: %s" % (url, e.code, hint if pd else "", text)
    except (socket.timeout, TimeoutError):
        return False, "%s gave no answer within 300 s%s" % (url, hint)
    except Exception as e:
        return False, "%s: %s" % (url, e)
    choices = reply.get("choices") or []
    if not choices:
        return False, "%s answered with no choice: %s" % (url, json.dumps(reply)[:500])
    return True, "%s answered through prefill and decode: %r" % (url, (choices[0].get("message") or {}).get("content"))
def ready(url, model):
    # Exits 0 when the models URL lists the model, and says what it saw
    # otherwise.
    ok, saw = check_ready(url, model)
    if not ok:
        sys.exit("not ready: " + saw)
    print("ready: " + saw)
def smoke(url, model, unit):
    ok, saw = check_smoke(url, model, unit)
    if not ok:
        sys.exit("smoke: " + saw)
    print("smoke: " + saw)
def run(argv, timeout=None):
    # A command's status and output, or None and why it could not run.
    try:
        out = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "cannot run %s (%s)" % (argv[0], getattr(e, "strerror", None) or e)
    return out, None
def first_lines(text, n=3):
    # A command's output on one line: its first non-empty lines, without
    # the dots cloud-init prints while it waits.
    lines = [l.strip(". \t") for l in text.splitlines()]
    return "; ".join([l for l in lines if l][:n]) or "nothing"
def check_cloud_init():
    # Exit status 1 is an error, 2 (cloud-init 23.4 on) a recoverable one.
    out, why = run(["cloud-init", "status", "--wait"])
    if out is None:
        return False, why
    said = first_lines(out.stdout)
    if out.returncode != 0:
        err = first_lines(out.stderr) if out.stderr.strip() else ""
        return False, "%s (exit status %d)%s" % (said, out.returncode, ": " + err if err else "")
    return True, said
def check_config(path, want):
    try:
        with open(path, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        return False, "cannot be read (%s)" % e.strerror
    if sha != want:
        return False, "SHA-256 %s, but the plan's is %s: the machine holds another plan's config" % (sha, want)
    return True, "SHA-256 %s" % sha
UNIT_STATE = ("LoadState", "ActiveState", "SubState", "NRestarts")
def check_unit(name):
    # Property=value lines: with --value, systemctl prints the values in its
    # own order, not the one asked for.
    out, why = run(["systemctl", "show", "--no-pager"] + ["--property=" + p for p in UNIT_STATE] + ["--", name], timeout=60)
    if out is None:
        return False, why
    if out.returncode != 0:
        return False, "systemctl show failed (exit status %d): %s" % (out.returncode, first_lines(out.stderr + out.stdout))
    props = dict(l.split("=", 1) for l in out.stdout.splitlines() if "=" in l)
    load = props.get("LoadState", "loaded")
    if load != "loaded":
        return False, "no such unit on this machine" if load == "not-found" else "not loaded (%s)" % load
    restarts = props.get("NRestarts", "?")
    saw = "%s (%s), %s restart%s" % (props.get("ActiveState", "?"), props.get("SubState", "?"), restarts, "" if restarts == "1" else "s")
    return props.get("ActiveState") == "active", saw
TCP_LISTEN = "0A"
def listening(port):
    # The addresses listening on a TCP port, from the kernel's socket
    # tables: each address is the raw 32-bit words in host byte order, the
    # port in hex.
    found, unread = [], []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError as e:
            unread.append("%s (%s)" % (table, e.strerror))
            continue
        for row in rows:
            fields = row.split()
            if len(fields) < 4 or fields[3] != TCP_LISTEN:
                continue
            addr, _, hexport = fields[1].partition(":")
            if int(hexport, 16) != port:
                continue
            raw = b"".join(bytes.fromhex(addr[i:i + 8])[::-1 if sys.byteorder == "little" else 1] for i in range(0, len(addr), 8))
            host = socket.inet_ntop(family, raw)
            found.append(("[%s]:%d" if family == socket.AF_INET6 else "%s:%d") % (host, port))
    return sorted(set(found)), unread
def check_listen(port):
    found, unread = listening(port)
    if found:
        return True, "listens on " + ", ".join(found)
    if len(unread) == 2:
        return False, "cannot read " + " or ".join(unread)
    return False, "nothing listens" + (" (cannot read %s)" % unread[0] if unread else "")
def journal(unit):
    # This boot's messages of the unit, one a line, and what journalctl
    # said on stderr: as a user outside the journal's groups it warns there
    # and shows nothing of the unit.
    out, why = run(["journalctl", "-b", "--no-pager", "-o", "cat", "-u", unit])
    if out is None:
        return None, why
    if out.returncode != 0:
        return None, "journalctl failed (exit status %d): %s" % (out.returncode, first_lines(out.stderr + out.stdout))
    return [l for l in out.stdout.splitlines() if l != "-- No entries --"], first_lines(out.stderr) if out.stderr.strip() else ""
def check_log(unit, text, want):
    lines, warned = journal(unit)
    if lines is None:
        return False, warned
    hits = [l for l in lines if text in l]
    note = " (journalctl: %s)" % warned if warned else ""
    if hits:
        saw = "%d line%s this boot, the first: %s" % (len(hits), "" if len(hits) == 1 else "s", hits[0].strip()[:300])
        return want, saw
    saw = "none in its %d line%s this boot%s" % (len(lines), "" if len(lines) == 1 else "s", note)
    # A warning may mean the journal was not read: absence is then unproven.
    return not want and not warned, saw
READY_EVERY = 5
def check_ready_within(url, model, wait):
    start = time.monotonic()
    said = False
    while True:
        ok, saw = check_ready(url, model)
        took = time.monotonic() - start
        if ok:
            return True, saw + (" (after %d s)" % took if said else "")
        if took + READY_EVERY > wait:
            return False, saw + (" (still, after %d s)" % took if said else "")
        if not said:
            sys.stderr.write("pd-check machine: %s is not ready yet; trying every %d s for up to %d s\n" % (url, READY_EVERY, wait))
            sys.stderr.flush()
            said = True
        time.sleep(READY_EVERY)
MACHINE_USAGE = """usage: %s machine [--wait SECONDS] CHECK...
Runs every check in the order given, prints one line for each,
"ok: WHAT: WHAT IT SAW" or "FAIL: WHAT: WHAT IT SAW", and exits 1 when any
failed, 0 when all passed, 2 on a usage error. Each check may repeat:
  --cloud-init          cloud-init status --wait exits 0
  --config PATH SHA256  the file at PATH has this SHA-256
  --unit NAME           the systemd unit is active
  --listen PORT         a socket listens on this TCP port (/proc/net/tcp, tcp6)
  --ready URL MODEL     the models URL lists MODEL
  --smoke URL MODEL UNIT  one chat completion crosses prefill and decode
  --log UNIT TEXT       this boot's journal of UNIT holds TEXT
  --no-log UNIT TEXT    this boot's journal of UNIT does not hold TEXT
--wait SECONDS (default 0) retries --ready every 5 s until it passes or the
time is up: loading the model takes minutes."""
# Each check's option: how many values it takes, and what its line names.
MACHINE_CHECKS = {
    "--cloud-init": (0, lambda: "cloud-init"),
    "--config": (2, lambda path, sha: "config " + path),
    "--unit": (1, lambda name: "unit " + name),
    "--listen": (1, lambda port: "port " + port),
    "--ready": (2, lambda url, model: "ready"),
    "--smoke": (3, lambda url, model, unit: "smoke"),
    "--log": (2, lambda unit, text: "%s logs %r" % (unit, text)),
    "--no-log": (2, lambda unit, text: "%s does not log %r" % (unit, text)),
}
def machine(argv):
    def usage(msg):
        sys.stderr.write("pd-check machine: %s\n%s\n" % (msg, MACHINE_USAGE % sys.argv[0]))
        return 2
    checks, wait = [], 0
    while argv:
        opt = argv.pop(0)
        if opt == "--wait":
            if not argv or not re.fullmatch(r"[0-9]+", argv[0]):
                return usage("--wait takes a whole number of seconds")
            wait = int(argv.pop(0))
            continue
        if opt not in MACHINE_CHECKS:
            return usage("unknown check %s" % opt)
        n = MACHINE_CHECKS[opt][0]
        if len(argv) < n:
            return usage("%s takes %d value%s" % (opt, n, "" if n == 1 else "s"))
        args, argv = argv[:n], argv[n:]
        if opt == "--listen" and not (re.fullmatch(r"[0-9]+", args[0]) and 0 < int(args[0]) < 65536):
            return usage("--listen takes a TCP port, not %s" % args[0])
        checks.append((opt, args))
    if not checks:
        return usage("no check given")
    run_check = {
        "--cloud-init": check_cloud_init,
        "--config": check_config,
        "--unit": check_unit,
        "--listen": lambda port: check_listen(int(port)),
        "--ready": lambda url, model: check_ready_within(url, model, wait),
        "--smoke": check_smoke,
        "--log": lambda unit, text: check_log(unit, text, True),
        "--no-log": lambda unit, text: check_log(unit, text, False),
    }
    failed = 0
    for opt, args in checks:
        try:
            ok, saw = run_check[opt](*args)
        except Exception as e:
            ok, saw = False, "the check could not run: %s: %s" % (type(e).__name__, e)
        failed += not ok
        # One line for each check, whatever a server answered; flushed, or
        # a pipe would hold the lines until a slow check is done.
        saw = re.sub(r"\s*\n\s*", " ", saw.strip())
        print("%s: %s: %s" % ("ok" if ok else "FAIL", MACHINE_CHECKS[opt][1](*args), saw), flush=True)
    return 1 if failed else 0
cmd = sys.argv[1:2]
if cmd == ["ready"] and len(sys.argv) == 4:
    ready(*sys.argv[2:])
    sys.exit(0)
if cmd == ["smoke"] and len(sys.argv) == 5:
    smoke(*sys.argv[2:])
    sys.exit(0)
if cmd == ["machine"]:
    sys.exit(machine(sys.argv[2:]))
if cmd != ["preflight"] or len(sys.argv) < 7:
    fail("usage: %s preflight VERSION line|release VLLM_LINE CONFIG SHA256 [OPTION VALUE]... [-- COMMAND...] | ready URL MODEL | smoke URL MODEL UNIT | machine [--wait SECONDS] CHECK..." % sys.argv[0])
want, mode, want_vllm, path, want_sha = sys.argv[2:7]
args = sys.argv[7:]
gpus, imports, transports, edge_transports, rest = 0, [], [], [], []
head, head_wait, head_unit, registration = None, 0, "", None
while args:
    a = args.pop(0)
    if a == "--":
        rest = args
        break
    if not args:
        fail("option %s has no value; the unit was not written by this plan" % a)
    v = args.pop(0)
    if a == "--gpus":
        gpus = int(v)
    elif a == "--import":
        imports.append(v.split("=", 1))
    elif a == "--transport":
        transports.append(v.split("=", 1))
    elif a == "--edge-transport":
        edge_transports.append(v.split("=", 1))
    elif a == "--head":
        head = v
    elif a == "--head-wait":
        head_wait = int(v)
    elif a == "--head-unit":
        head_unit = v
    elif a == "--registration":
        registration = v
    else:
        fail("unknown option %s; the unit was not written by this plan" % a)
SHELLS = ("sh", "bash", "dash")
# The directory uv's relocatable trampolines find their Python in, as the
# shell computes it: the script's real directory, and before that the
# directory of $0.
BESIDE = (('"$(dirname -- "$(realpath -- "$0")")"/', lambda s: os.path.dirname(os.path.realpath(s))),
          ('"$(CDPATH= cd -- "$(dirname -- "$0")" && echo "$PWD")"/', lambda s: os.path.dirname(os.path.abspath(s))))
def trampoline(script, lines):
    # Where "#!<python>" would pass the kernel's 127 bytes or hold a space,
    # pip and virtualenv (distlib) and uv start the script with /bin/sh, a
    # line that sh runs and Python reads as the start of a string,
    # '''exec' <python> "$0" "$@", and one that ends the string, ' '''.
    # <python> is one shell word.
    if len(lines) < 3 or lines[2].strip() != b"' '''":
        return None
    line = lines[1].rstrip(b"\r\n").decode(errors="replace")
    head, tail = "'''exec' ", ' "$0" "$@"'
    if not (line.startswith(head) and line.endswith(tail)):
        return None
    expr, base = line[len(head):-len(tail)], ""
    for prefix, where in BESIDE:
        if expr.startswith(prefix):
            expr, base = expr[len(prefix):], where(script)
            break
    try:
        words = shlex.split(expr)
    except ValueError:
        return None
    if not words:
        return None
    return os.path.normpath(os.path.join(base, words[0])) if base else words[0]
def python_of(script):
    # The Python the script runs in, and how its first lines say so; None
    # for a binary, or a shell script of the user's, which the check cannot
    # read.
    try:
        with open(script, "rb") as f:
            lines = [f.readline(65536) for _ in range(3)]
    except OSError as e:
        fail("%s cannot be read (%s); set systemd.vllm_path to the vllm executable" % (script, e.strerror))
    words = lines[0][2:].split() if lines[0].startswith(b"#!") else []
    if not words:
        return None, None
    interp = words[0].decode(errors="replace")
    name = os.path.basename(interp)
    if name == "env":
        cmd = [w.decode(errors="replace") for w in words[1:] if not w.startswith(b"-") and b"=" not in w]
        found = shutil.which(cmd[0]) if cmd else None
        if not found:
            fail("%s runs %s, which finds no %s on PATH (%s); set systemd.vllm_path to the vllm of the Python that should run it" % (script, b" ".join(words).decode(errors="replace"), cmd[0] if cmd else "command", os.environ.get("PATH", "")))
        return found, "through env"
    if name in SHELLS:
        found = trampoline(script, lines)
        if found is None:
            say("warning", "%s is a %s script, not a trampoline of pip, uv or virtualenv, so this check cannot tell which Python it runs; it checked %s" % (script, interp, sys.executable))
            return None, None
        return found, "by its /bin/sh trampoline"
    return interp, "by its first line"
def environment(python):
    # A virtual environment is the directory of its pyvenv.cfg, where
    # Python's site module finds it (beside the executable or one level
    # up): its python links to the base interpreter, so the real path alone
    # does not tell a venv from the Python it was made from.
    exe_dir = os.path.dirname(os.path.abspath(python))
    for d in (exe_dir, os.path.dirname(exe_dir)):
        if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
            return "venv", os.path.realpath(d)
    return "python", os.path.realpath(python)
if rest:
    # The check is worth only as much as the Python it runs in: it must be
    # the one vllm runs in, so that comes first.
    interp, how = python_of(rest[0])
    if interp is not None:
        if not os.path.isabs(interp):
            fail("%s names %s, not an absolute path, as its Python; reinstall vllm-omni with the pip of the Python that should run it" % (rest[0], interp))
        if environment(interp) != environment(sys.executable):
            fail("%s runs in %s (%s), but this check ran in %s; set systemd.python_path to %s" % (rest[0], interp, how, sys.executable, interp))
# A normalized PEP 440 public version with a local part: the release is
# any number of dot-separated parts (PEP 440, "Public version identifiers":
# N(.N)*), so pip installs 0.24.0.1, a release after 0.24.0 and before
# 0.24.1, and 0.24.0.0, which equals 0.24.0 (release parts compare padded
# with zeros).
PEP440 = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?P<more>(?:\.\d+)*)(?P<pre>(?:a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[A-Za-z0-9.]+)?$", re.I)
def later(m):
    # The release parts after the third, when they are not all zero.
    return any(int(x) for x in m.group("more").split(".")[1:])
# The package each distribution installs, which Python's import finds.
PACKAGE = {"vllm-omni": "vllm_omni", "vllm": "vllm"}
def imported_from(name):
    # The directory Python's import would load the distribution's package
    # from, without running it; None where it finds none.
    try:
        spec = importlib.util.find_spec(PACKAGE[name])
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not os.path.isabs(spec.origin):
        return None
    where = os.path.dirname(spec.origin)
    if spec.submodule_search_locations is not None:
        where = os.path.dirname(where)
    return os.path.realpath(where)
def installed(name):
    # The version of the distribution Python's import would load.
    # metadata.version reads the first record it finds, and inside one
    # directory that is the order os.listdir gives: with a stale
    # name-version.dist-info left beside the installed one (an interrupted
    # upgrade, a second installer), it may read the stale one. So the
    # records are grouped by directory, in sys.path order; the directory
    # the package is imported from decides (else the first, as
    # metadata.version and the import both take the first), and two
    # versions recorded there are refused: nothing tells which one's files
    # are on disk.
    where = {}
    for d in metadata.distributions(name=name):
        if not d.version:
            continue
        try:
            site = os.path.realpath(str(d.locate_file("")))
        except Exception:
            # A distribution from a finder with no directory: keyed alone.
            site = repr(d)
        where.setdefault(site, {})[d.version] = os.path.basename(str(getattr(d, "_path", d.version)))
    if not where:
        fail("%s is not installed for %s; this machine was planned for vllm-omni %s with vLLM %s: install them into that Python" % (name, sys.executable, want, want_vllm))
    site = imported_from(name)
    if site not in where:
        site = next(iter(where))
    found = where[site]
    if len(found) > 1:
        fail("%s is recorded as installed %d times in %s (%s), and which record a reader takes is the directory's order, so this check cannot tell which version Python imports; delete the records of the versions not installed there, or pip uninstall %s until none is left and install the one the plan is for" % (name, len(found), site, ", ".join(sorted(found.values())), name))
    return next(iter(found))
def parts(v, name):
    m = PEP440.match(v)
    if not m:
        fail("%s %s is not a version this check reads: it reads PEP 440's normalized N.N[.N...][aN|bN|rcN][.postN][.devN][+LOCAL]" % (name, v))
    return m
omni = installed("vllm-omni")
m = parts(omni, "vllm-omni")
line = m.group(1) + "." + m.group(2)
base = line + "." + (m.group(3) or "0")
extra = "".join(g for g in m.group(6, 7, 8) if g)
if mode == "line":
    if line != want:
        fail("vllm-omni %s is installed, but the plan is for the %s line; install vllm-omni==%s.* or set vllm_omni_version = \"%s\" and plan again" % (omni, want, want, line))
    if m.group("pre") or extra:
        say("warning", "vllm-omni %s is a pre-release or local build of the %s line" % (omni, want))
else:
    w = parts(want, "the planned release")
    wbase = w.group(1) + "." + w.group(2) + "." + (w.group(3) or "0")
    pre_same = (m.group("pre") or "").lower() == (w.group("pre") or "").lower()
    same = base == wbase and pre_same
    rc_of_final = base == wbase and not w.group("pre") and m.group("pre")
    if not (same or rc_of_final):
        fail("vllm-omni %s is installed, but the plan is for vllm-omni %s; install vllm-omni==%s or set vllm_omni_version = \"%s\" and plan again" % (omni, want, want, omni))
    if rc_of_final or extra:
        say("warning", "vllm-omni %s is a pre-release, post-release or local build of %s" % (omni, want))
    elif later(m) or later(w):
        # Another release of the same patch, as a post-release is: run it,
        # and say so.
        say("warning", "vllm-omni %s is not %s: they differ after the third release part, which the plan does not read" % (omni, want))
vllm = installed("vllm")
v = parts(vllm, "vLLM")
if v.group(1) + "." + v.group(2) != want_vllm:
    fail("vLLM %s is installed, but vllm-omni %s needs vLLM %s.x (a major.minor skew fails at import); install vllm==%s.*" % (vllm, want, want_vllm, want_vllm))
# vLLM's builds for no CUDA GPU say so in their local version label
# (setup.py@28be48fa:910-936: +cpu, +empty, +tpu, +xpu; CUDA's is none,
# +precompiled or +cuNNN, ROCm's +rocmNNN): such a build on a process the
# plan gives GPUs runs without them, or fails once it asks for one.
NO_GPU_BUILDS = ("cpu", "empty", "tpu", "xpu")
label = [x.lower() for x in (v.group(8) or "+").lstrip("+").split(".")]
if gpus and any(x in NO_GPU_BUILDS for x in label):
    fail("vLLM %s is vLLM's build for %s, not for CUDA GPUs, but the plan gives this process GPU indices up to %d; install vLLM's CUDA build (pip install vllm==%s, without the +%s label) into %s" % (vllm, next(x for x in label if x in NO_GPU_BUILDS), gpus - 1, vllm.split("+")[0], "+".join(vllm.split("+")[1:]), sys.executable))
try:
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
except OSError as e:
    fail("the deploy config %s cannot be read (%s); write the plan's config_yaml there" % (path, e.strerror))
if sha != want_sha:
    fail("the deploy config %s has SHA-256 %s, but the plan's config_sha256 is %s: the machine holds another plan's config; write this plan's config_yaml there, or replace the machine" % (path, sha, want_sha))
def count_gpus():
    # nvidia-smi and the driver's /proc entries count the GPUs without
    # creating a CUDA context, so no GPU memory is taken.
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        if out.returncode == 0:
            return len([l for l in out.stdout.splitlines() if l.startswith("GPU ")]), "nvidia-smi -L"
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return len(os.listdir("/proc/driver/nvidia/gpus")), "/proc/driver/nvidia/gpus"
    except OSError:
        return None, None
def gpu_uuids():
    # The UUID of each GPU index, from nvidia-smi -L (which lists every GPU
    # whatever CUDA_VISIBLE_DEVICES says); [] where it cannot run.
    out, _ = run(["nvidia-smi", "-L"], timeout=60)
    if out is None or out.returncode != 0:
        return []
    return [m.group(1) for m in re.finditer(r"^GPU \d+: .*\(UUID: (GPU-[^)]+)\)", out.stdout, re.M)]
def masked(entries, n):
    # What an inherited CUDA_VISIBLE_DEVICES does to GPU indices 0 to n - 1:
    # each problem in words, none when index i is GPU i for every i < n.
    # vllm-omni maps a stage's devices through it, logical index i to its
    # i-th entry (entrypoints/stage_utils.py@d4a869fe:35-38, 146), while the
    # plan's devices are the host's GPU indices as nvidia-smi -L numbers
    # them. Only the indices below n are known here (--gpus is the highest
    # + 1), so all of them must map to themselves: this also refuses a mask
    # that works only through vllm-omni's fallback of passing indices it
    # cannot map through as physical ones (stage_utils.py@d4a869fe:135),
    # which it logs as a warning and vLLM's workers do not share.
    problems, uuids = [], None
    for i in range(n):
        if i >= len(entries):
            problems.append("hides GPU %d" % i)
            continue
        e = entries[i]
        if e.isdigit():
            got = int(e)
        else:
            # CUDA takes a GPU's UUID, or a unique start of it.
            if uuids is None:
                uuids = gpu_uuids()
            hits = [j for j, u in enumerate(uuids) if u.startswith(e)]
            got = hits[0] if len(hits) == 1 else None
        if got is None:
            problems.append("names %s for GPU %d, which is no GPU index or UUID nvidia-smi -L lists" % (e, i))
        elif got != i:
            problems.append("makes GPU %d GPU %d" % (i, got))
    return problems
if gpus:
    have, how = count_gpus()
    if have is None:
        say("warning", "cannot count this host's GPUs (no nvidia-smi, no /proc/driver/nvidia/gpus); the process is given GPU indices up to %d" % (gpus - 1))
    elif have < gpus:
        fail("this host has %d GPU(s) (%s), but the plan for vllm-omni %s gives this process GPU index %d, so it needs %d; run it on a host with enough GPUs or plan again with gpus = %d" % (have, how, want, gpus - 1, gpus, have))
    mask = os.environ.get("CUDA_VISIBLE_DEVICES")
    if mask is not None:
        # vllm-omni splits it as _parse_device_list does
        # (stage_utils.py@d4a869fe:93, 106): at commas, blanks dropped.
        problems = masked([e.strip() for e in mask.split(",") if e.strip()], gpus)
        if problems:
            fail("CUDA_VISIBLE_DEVICES=%s, which this process inherits (from systemd.environment_file or the environment systemd runs it in), %s, but the plan gives this process the host's GPU indices up to %d as nvidia-smi -L numbers them and vllm-omni %s maps them through it; remove CUDA_VISIBLE_DEVICES from the unit's environment, or make it start with %s" % (shlex.quote(mask), "; ".join(problems), gpus - 1, want, ",".join(str(i) for i in range(gpus))))
def resolve(dotted):
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError as e:
        if e.name != dotted or "." not in dotted:
            raise
    mod, _, attr = dotted.rpartition(".")
    obj = importlib.import_module(mod)
    if not hasattr(obj, attr):
        raise AttributeError("module %s has no attribute %s" % (mod, attr))
    return getattr(obj, attr)
PIP = {"mooncake.engine": "mooncake-transfer-engine", "nixl._api": "nixl"}
def first_line(e):
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
for conn, module in transports:
    try:
        importlib.import_module(module)
    except Exception as e:
        fail("%s needs the Python package %s, which does not import in %s (%s); the plan for vllm-omni %s uses %s: install it (pip: %s) into that Python" % (conn, module, sys.executable, first_line(e), want, conn, PIP.get(module, module.split(".")[0])))
for conn, module in edge_transports:
    # vllm-omni builds an edge's connector at its first transfer, so this
    # warns rather than refusing a machine that may never build it.
    try:
        importlib.import_module(module)
    except Exception as e:
        say("warning", "the deploy config names %s on an edge of this stage; it needs the Python package %s, which does not import in %s (%s): a transfer through it would fail (install %s), though vllm-omni %s's stage-based launch hands stages their input through /dev/shm and may never build it" % (conn, module, sys.executable, first_line(e), PIP.get(module, module.split(".")[0]), want))
for key, dotted in imports:
    try:
        resolve(dotted)
    except Exception as e:
        fail("%s %s does not resolve in the installed vllm-omni %s (%s); the plan for vllm-omni %s names it: correct the base config, or plan for the release that has it" % (key, dotted, omni, first_line(e), want))
def wait_for_head():
    # A headless stage registers with the head's omni master once, at
    # start: wait for its port, each try bounded, until the deadline. The
    # status is 1, not STATUS: the head may come later, so systemd starts
    # this again.
    host, _, port = head.rpartition(":")
    deadline = time.monotonic() + head_wait
    said = False
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
            return
        except OSError:
            pass
        if time.monotonic() >= deadline:
            break
        if not said:
            say("waiting", "the head's omni master at %s does not answer yet; waiting up to %d s" % (head, head_wait))
            said = True
        time.sleep(2)
    say("error", "the head's omni master at %s did not answer within %d s; start %s on %s first" % (head, head_wait, head_unit, host))
    sys.exit(1)
# A module the plan writes is named by the start of its SHA-256 (the
# planner's registrationName): one that does not hash to its name is
# another plan's.
REGISTRATION = re.compile(r"omni_pd_([0-9a-f]{16})\.py")
def check_registration(path):
    m = REGISTRATION.fullmatch(os.path.basename(path))
    if not m:
        return  # the user's own module: the launcher imports it
    try:
        with open(path, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        fail("the pipeline registration %s cannot be read (%s); write the plan's registration there" % (path, e.strerror))
    if not sha.startswith(m.group(1)):
        fail("the pipeline registration %s has SHA-256 %s, which does not start with its name's %s: the machine holds another plan's; write this plan's registration there, or replace the machine" % (path, sha, m.group(1)))
# The launcher the preflight execs where the plan registers its pipeline,
# in this Python (the one vllm runs in): python -c LAUNCH MODULE RELEASE --
# VLLM ARGS... It imports vllm-omni's pipeline registry, then the
# registration (the file MODULE, else the module of its name on Python's
# path), checks that the registry then holds the pipeline of that name with
# one prefill and one decode stage, decode's id the prefill's plus one,
# and runs vllm-omni's CLI in this same process with sys.argv as vllm's
# own would be: vllm-omni resolves the deploy config's pipeline: in the
# process its CLI runs in, the head and a headless stage alike, before
# any plugin loads. With -c, __main__ has no file, so the processes
# multiprocessing spawns do not run it again; they need no registration.
LAUNCH = r'''
import importlib, importlib.util, os, sys
def fail(msg):
    sys.stderr.write("vllm-omni preflight: error: %s\n" % msg)
    sys.exit(78)
def first_line(e):
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
if sys.path and sys.path[0] == "":
    del sys.path[0]
path, want, argv = sys.argv[1], sys.argv[2], sys.argv[4:]
key = os.path.basename(path)[:-3]
REGISTRY = "vllm_omni.config.pipeline_registry"
try:
    registry = importlib.import_module(REGISTRY)
except Exception as e:
    fail("vllm-omni's pipeline registry %s does not import in %s (%s: %s); the plan for vllm-omni %s registers its pipeline there" % (REGISTRY, sys.executable, type(e).__name__, first_line(e), want))
where = path if os.path.exists(path) else key
try:
    if where == path:
        spec = importlib.util.spec_from_file_location(key, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    else:
        importlib.import_module(key)
except ModuleNotFoundError as e:
    if e.name != key:
        fail("the pipeline registration %s does not import (%s: %s)" % (where, type(e).__name__, first_line(e)))
    fail("the pipeline registration %s is neither a file there nor a module on Python's path; write it to %s" % (key, path))
except Exception as e:
    fail("the pipeline registration %s does not import (%s: %s); if vllm-omni's register_pipeline() or its dataclasses are not those of vllm-omni %s, which the plan was made for, it does not fit the installed vllm-omni" % (where, type(e).__name__, first_line(e), want))
pipelines = getattr(registry, "OMNI_PIPELINES", None)
if not isinstance(pipelines, dict):
    fail("%s has no OMNI_PIPELINES dict, which the plan for vllm-omni %s reads: the installed registry is another" % (REGISTRY, want))
pipeline = pipelines.get(key)
if pipeline is None:
    fail("after importing %s, vllm-omni's registry holds no pipeline %s, which the deploy config's pipeline: names; register it under that name" % (where, key))
roles = {"is_prefill_only": [], "is_decode_only": []}
for stage in getattr(pipeline, "stages", None) or ():
    extras = getattr(stage, "extras", None) or {}
    for flag in roles:
        if extras.get(flag) is True:
            roles[flag].append(getattr(stage, "stage_id", None))
pre, dec = roles["is_prefill_only"], roles["is_decode_only"]
if len(pre) != 1 or len(dec) != 1 or not isinstance(pre[0], int) or dec[0] != pre[0] + 1:
    fail("pipeline %s marks prefill stages %s and decode stages %s in its stages' extras; vllm-omni runs prefill-decode with one of each, decode's id the prefill's plus one" % (key, pre, dec))
CLI = "vllm_omni.entrypoints.cli.main"
try:
    main = importlib.import_module(CLI).main
except Exception as e:
    fail("vllm-omni's CLI %s does not import in %s (%s: %s)" % (CLI, sys.executable, type(e).__name__, first_line(e)))
sys.argv = argv
sys.exit(main())
'''
if registration:
    check_registration(registration)
if head and "--headless" in rest:
    wait_for_head()
if rest:
    # The unit's per-stage words came in through these; vllm needs none.
    for name in UNIT_WORDS:
        os.environ.pop(name, None)
    if registration:
        # vllm's argv, as its script would have had it, run by vllm-omni's
        # CLI in this Python once the registration is imported.
        if not sys.executable:
            fail("this Python cannot name its own executable, which the launcher needs")
        os.execv(sys.executable, [sys.executable, "-c", LAUNCH, registration, want, "--"] + rest)
    try:
        os.execv(rest[0], rest)
    except OSError as e:
        fail("%s cannot be started (%s); set systemd.vllm_path to the vllm executable" % (rest[0], e.strerror))
say("ok", "vllm-omni %s, vLLM %s and %s match the plan" % (omni, vllm, path))

