package pipeline

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// machineFakes is what the fake tools on the check's PATH answer: each
// tool is a /bin/sh script of builtins only, so PATH holds nothing else.
type machineFakes struct {
	cloudInit  string            // cloud-init's script body; "" for none on PATH
	units      map[string]string // systemctl show's Property=value lines, by unit
	journals   map[string]string // journalctl's lines, by unit
	journalErr bool              // journalctl exits 1, as on a machine without a journal
}

// write puts the fake tools in a new directory and returns it.
func (f machineFakes) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	tool := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if f.cloudInit != "" {
		tool("cloud-init", `[ "$*" = "status --wait" ] || { echo "cloud-init called with $*" >&2; exit 64; }`+"\n"+f.cloudInit)
	}
	// The unit is the last word, after "--".
	var show strings.Builder
	show.WriteString(`[ "$1 $2 $3 $4 $5 $6 $7" = "show --no-pager --property=LoadState --property=ActiveState --property=SubState --property=NRestarts --" ] || { echo "systemctl called with $*" >&2; exit 64; }` + "\n")
	show.WriteString("case \"$8\" in\n")
	for unit, props := range f.units {
		fmt.Fprintf(&show, "%s) printf '%%s\\n' %s ;;\n", quote(unit), quoteEach(quote, strings.Split(props, "\n")))
	}
	show.WriteString("*) printf 'LoadState=not-found\\nActiveState=inactive\\nSubState=dead\\nNRestarts=0\\n' ;;\nesac\n")
	tool("systemctl", show.String())
	var journal strings.Builder
	journal.WriteString(`[ "$1 $2 $3 $4 $5" = "-b --no-pager -o cat -u" ] || { echo "journalctl called with $*" >&2; exit 64; }` + "\n")
	if f.journalErr {
		journal.WriteString("echo 'No journal files were found.' >&2\nexit 1\n")
	}
	journal.WriteString("case \"$6\" in\n")
	for unit, lines := range f.journals {
		fmt.Fprintf(&journal, "%s) printf '%%s\\n' %s ;;\n", quote(unit), quoteEach(quote, strings.Split(lines, "\n")))
	}
	journal.WriteString("*) echo '-- No entries --' ;;\nesac\n")
	tool("journalctl", journal.String())
	return dir
}

func quoteEach(quote func(string) string, words []string) string {
	for i, w := range words {
		words[i] = quote(w)
	}
	return strings.Join(words, " ")
}

// machinePython is Debian's python3 where there is one: the PATH the
// check runs with holds only the fakes, which a python3 shim of a version
// manager cannot start from.
func machinePython(t *testing.T) string {
	t.Helper()
	python := testtool.Need(t, "python3")
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3"
	}
	return python
}

// runMachine runs the check script's machine with the fake tools on PATH
// and returns its stdout, stderr and exit status.
func runMachine(t *testing.T, python, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(python, append([]string{checkScriptFile(), "machine"}, args...)...)
	cmd.Env = preflightEnv(t, t.TempDir(), bin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	status := testtool.ExitStatus(t, cmd.Run())
	return stdout.String(), stderr.String(), status
}

// listen opens a TCP socket in LISTEN state on a free port of addr until
// the test ends, and returns the port.
func listen(t *testing.T, network, addr string) (int, bool) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		return 0, false
	}
	t.Cleanup(func() { ln.Close() })
	return tcpPort(t, ln), true
}

func tcpPort(t *testing.T, ln net.Listener) int {
	t.Helper()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("%v is not a TCP address", ln.Addr())
	}
	return addr.Port
}

// freePort is a port nobody listens on: one the kernel handed out and
// that was closed again.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := tcpPort(t, ln)
	ln.Close()
	return port
}

// The check script's machine, run by Debian's python3 with fake
// cloud-init, systemctl and journalctl and a real listening socket: with
// every check passing it says ok for each, in order, and exits 0; each
// check failing alone turns its line into a FAIL that says what it saw,
// the others still run, and the status is 1.
func TestMachineChecks(t *testing.T) {
	python := machinePython(t)
	const (
		model   = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
		head    = "vllm-omni-stage@0.service"
		decode  = "vllm-omni-stage@1.service"
		found   = "PD disaggregation detected: prefill=stage-0, decode=stage-1"
		nixl    = "NIXL compatibility check passed"
		skipped = "will not utilize KVTransfer"
		active  = "LoadState=loaded\nActiveState=active\nSubState=running\nNRestarts=0"
	)
	config := filepath.Join(t.TempDir(), "deploy config.yaml") // a space, as a path may hold
	if err := os.WriteFile(config, []byte("stage_args: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sha := sha256Hex("stage_args: []\n")
	port, _ := listen(t, "tcp", "127.0.0.1:0")
	ready := serveOnce(t, `{"data":[{"id":"`+model+`"}]}`)
	smoke := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"Hi"}}]}`))
	}))
	t.Cleanup(smoke.Close)
	good := machineFakes{
		cloudInit: "echo '...'\necho 'status: done'\n",
		units:     map[string]string{head: active, decode: active},
		journals: map[string]string{
			head:   "Starting the omni master\n" + found,
			decode: "Loading weights\n" + nixl + "\nTransfer plan: 1 block",
		},
	}
	// The checks of a head that runs decode too, as the examples hand them
	// out; each case changes one.
	checks := [][]string{
		{"--cloud-init"},
		{"--config", config, sha},
		{"--unit", head},
		{"--unit", decode},
		{"--listen", strconv.Itoa(port)},
		{"--ready", ready, model},
		{"--smoke", smoke.URL + "/v1/chat/completions", model, head},
		{"--log", head, found},
		{"--log", decode, nixl},
		{"--no-log", decode, skipped},
	}
	argv := func(swap map[int][]string) []string {
		var out []string
		for i, c := range checks {
			if s := swap[i]; s != nil {
				c = s
			}
			out = append(out, c...)
		}
		return out
	}
	wantOK := []string{
		"ok: cloud-init: status: done",
		"ok: config " + config + ": SHA-256 " + sha,
		"ok: unit " + head + ": active (running), 0 restarts",
		"ok: unit " + decode + ": active (running), 0 restarts",
		"ok: port " + strconv.Itoa(port) + ": listens on 127.0.0.1:" + strconv.Itoa(port),
		"ok: ready: " + ready + " serves " + model,
		"ok: smoke: " + smoke.URL + "/v1/chat/completions answered through prefill and decode: 'Hi'",
		"ok: " + head + " logs '" + found + "': 1 line this boot, the first: " + found,
		"ok: " + decode + " logs '" + nixl + "': 1 line this boot, the first: " + nixl,
		"ok: " + decode + " does not log '" + skipped + "': none in its 3 lines this boot",
	}
	t.Run("all pass", func(t *testing.T) {
		out, errOut, status := runMachine(t, python, good.write(t), argv(nil)...)
		if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); status != 0 || strings.Join(got, "\n") != strings.Join(wantOK, "\n") {
			t.Errorf("status %d, want 0; got\n%s\nwant\n%s\nstderr: %s", status, out, strings.Join(wantOK, "\n"), errOut)
		}
	})

	other := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(other, []byte("stage_args: [{}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nobody := freePort(t)
	notServing := serveOnce(t, `{"data":[]}`)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"[Orchestrator][PD] Missing prefill kv_transfer_params.remote_request_id"}}`, http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	with := func(change func(f *machineFakes)) machineFakes {
		f := good
		f.units, f.journals = map[string]string{}, map[string]string{}
		for k, v := range good.units {
			f.units[k] = v
		}
		for k, v := range good.journals {
			f.journals[k] = v
		}
		change(&f)
		return f
	}
	for _, tc := range []struct {
		name  string
		fakes machineFakes
		check int      // the check that fails
		swap  []string // its words instead of the passing ones
		says  string   // its line
	}{
		{"cloud-init reports an error", with(func(f *machineFakes) { f.cloudInit = "echo 'status: error'\nexit 1\n" }), 0, nil,
			"FAIL: cloud-init: status: error (exit status 1)"},
		{"cloud-init degraded", with(func(f *machineFakes) {
			f.cloudInit = "echo 'status: done'\necho 'Recoverable error: schema' >&2\nexit 2\n"
		}), 0, nil,
			"FAIL: cloud-init: status: done (exit status 2): Recoverable error: schema"},
		{"no cloud-init", with(func(f *machineFakes) { f.cloudInit = "" }), 0, nil,
			"FAIL: cloud-init: cannot run cloud-init (No such file or directory)"},
		{"another plan's config", good, 1, []string{"--config", other, sha},
			"FAIL: config " + other + ": SHA-256 " + sha256Hex("stage_args: [{}]\n") + ", but the plan's is " + sha + ": the machine holds another plan's config"},
		{"no config", good, 1, []string{"--config", other + ".missing", sha},
			"FAIL: config " + other + ".missing: cannot be read (No such file or directory)"},
		{"a unit that failed", with(func(f *machineFakes) {
			f.units[decode] = "LoadState=loaded\nActiveState=failed\nSubState=failed\nNRestarts=5"
		}), 3, nil, "FAIL: unit " + decode + ": failed (failed), 5 restarts"},
		{"a unit restarting", with(func(f *machineFakes) {
			f.units[decode] = "LoadState=loaded\nActiveState=activating\nSubState=auto-restart\nNRestarts=1"
		}), 3, nil, "FAIL: unit " + decode + ": activating (auto-restart), 1 restart"},
		{"a unit not installed", with(func(f *machineFakes) { delete(f.units, decode) }), 3, nil,
			"FAIL: unit " + decode + ": no such unit on this machine"},
		{"a port nobody listens on", good, 4, []string{"--listen", strconv.Itoa(nobody)},
			"FAIL: port " + strconv.Itoa(nobody) + ": nothing listens"},
		{"the API lists no model", good, 5, []string{"--ready", notServing, model},
			"FAIL: ready: " + notServing + " lists no model, not " + model},
		{"the smoke request fails in the handoff", good, 6, []string{"--smoke", broken.URL + "/v1/chat/completions", model, head},
			"~^FAIL: smoke: " + broken.URL + "/v1/chat/completions answered 500 \\(if prefill could not hand its KV cache to decode, journalctl -u " + head + " shows .*remote_request_id"},
		{"the pair not found", with(func(f *machineFakes) { f.journals[head] = "Starting the omni master" }), 7, nil,
			"FAIL: " + head + " logs '" + found + "': none in its 1 line this boot"},
		{"no handoff logged", with(func(f *machineFakes) { delete(f.journals, decode) }), 8, nil,
			"FAIL: " + decode + " logs '" + nixl + "': none in its 0 lines this boot"},
		{"a request skipped its KV transfer", with(func(f *machineFakes) {
			f.journals[decode] += "\nGot invalid KVTransferParams: {} will not utilize KVTransfer\nagain: will not utilize KVTransfer"
		}), 9, nil, "FAIL: " + decode + " does not log '" + skipped + "': 2 lines this boot, the first: Got invalid KVTransferParams: {} will not utilize KVTransfer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, status := runMachine(t, python, tc.fakes.write(t), argv(map[int][]string{tc.check: tc.swap})...)
			got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if status != 1 || len(got) != len(checks) {
				t.Fatalf("status %d, want 1 with %d lines:\n%s\nstderr: %s", status, len(checks), out, errOut)
			}
			for i, line := range got {
				switch {
				case i != tc.check:
					if !strings.HasPrefix(line, "ok: ") {
						t.Errorf("line %d: %q, want it to pass", i+1, line)
					}
				case strings.HasPrefix(tc.says, "~"):
					if !regexp.MustCompile(tc.says[1:]).MatchString(line) {
						t.Errorf("line %d: %q, want it to match %s", i+1, line, tc.says[1:])
					}
				case line != tc.says:
					t.Errorf("line %d: %q, want %q", i+1, line, tc.says)
				}
			}
		})
	}

	t.Run("every check failing", func(t *testing.T) {
		bad := machineFakes{cloudInit: "echo 'status: running'\nexit 1\n", journalErr: true}
		out, _, status := runMachine(t, python, bad.write(t),
			"--cloud-init", "--config", other+".missing", sha, "--unit", head, "--listen", strconv.Itoa(nobody),
			"--ready", notServing, model, "--log", head, found, "--no-log", decode, skipped)
		want := []string{
			"FAIL: cloud-init: status: running (exit status 1)",
			"FAIL: config " + other + ".missing: cannot be read (No such file or directory)",
			"FAIL: unit " + head + ": no such unit on this machine",
			"FAIL: port " + strconv.Itoa(nobody) + ": nothing listens",
			"FAIL: ready: " + notServing + " lists no model, not " + model,
			// Without a journal, absence is not proof either.
			"FAIL: " + head + " logs '" + found + "': journalctl failed (exit status 1): No journal files were found",
			"FAIL: " + decode + " does not log '" + skipped + "': journalctl failed (exit status 1): No journal files were found",
		}
		if status != 1 || strings.TrimSuffix(out, "\n") != strings.Join(want, "\n") {
			t.Errorf("status %d, want 1; got\n%s\nwant\n%s", status, out, strings.Join(want, "\n"))
		}
	})

	t.Run("an IPv6 listener", func(t *testing.T) {
		port6, ok := listen(t, "tcp6", "[::1]:0")
		if !ok {
			t.Skip("no IPv6 loopback")
		}
		out, _, status := runMachine(t, python, good.write(t), "--listen", strconv.Itoa(port6))
		if want := "ok: port " + strconv.Itoa(port6) + ": listens on [::1]:" + strconv.Itoa(port6) + "\n"; status != 0 || out != want {
			t.Errorf("status %d, got %q, want %q", status, out, want)
		}
	})
}

// --wait retries --ready every 5 s until the API lists the model or the
// time is up, and says how long it took; without it, one try.
func TestMachineChecks_ReadyWaits(t *testing.T) {
	python := machinePython(t)
	const model = "m"
	var asked atomic.Int32
	// Ready from the second request on, as a server is once its engines
	// have loaded.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if asked.Add(1) == 1 {
			_, _ = w.Write([]byte(`{"data":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"id":"m"}]}`))
	}))
	t.Cleanup(srv.Close)
	bin := machineFakes{}.write(t)
	url := srv.URL + "/v1/models"

	out, _, status := runMachine(t, python, bin, "--ready", url, model)
	if status != 1 || out != "FAIL: ready: "+url+" lists no model, not m\n" {
		t.Errorf("no wait: status %d:\n%s", status, out)
	}
	asked.Store(0)
	start := time.Now()
	out, errOut, status := runMachine(t, python, bin, "--ready", url, model, "--wait", "60")
	if took := time.Since(start); status != 0 || out != "ok: ready: "+url+" serves m (after 5 s)\n" || took < 5*time.Second || took > 20*time.Second {
		t.Errorf("--wait 60: status %d after %v:\n%s\nstderr: %s", status, took, out, errOut)
	}
	if !strings.Contains(errOut, "not ready yet; trying every 5 s for up to 60 s") {
		t.Errorf("--wait does not say it waits: %q", errOut)
	}
	notServing := serveOnce(t, `{"data":[]}`)
	start = time.Now()
	out, _, status = runMachine(t, python, bin, "--wait", "7", "--ready", notServing, model)
	if took := time.Since(start); status != 1 || out != "FAIL: ready: "+notServing+" lists no model, not m (still, after 5 s)\n" || took > 20*time.Second {
		t.Errorf("--wait 7, never ready: status %d after %v:\n%s", status, took, out)
	}
}

// A command line the check cannot read runs no check and exits 2, with
// the usage on stderr.
func TestMachineChecks_UsageErrors(t *testing.T) {
	python := machinePython(t)
	bin := machineFakes{}.write(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{nil, "no check given"},
		{[]string{"--wait", "5"}, "no check given"},
		{[]string{"--listen"}, "--listen takes 1 value"},
		{[]string{"--listen", "http"}, "--listen takes a TCP port, not http"},
		{[]string{"--listen", "70000"}, "--listen takes a TCP port, not 70000"},
		{[]string{"--log", "vllm-omni-stage@0.service"}, "--log takes 2 values"},
		{[]string{"--smoke", "http://127.0.0.1:8091/v1/chat/completions", "m"}, "--smoke takes 3 values"},
		{[]string{"--unit", "a.service", "--ports", "8091"}, "unknown check --ports"},
		{[]string{"--wait", "soon", "--cloud-init"}, "--wait takes a whole number of seconds"},
		{[]string{"--cloud-init", "--wait"}, "--wait takes a whole number of seconds"},
	} {
		out, errOut, status := runMachine(t, python, bin, tc.args...)
		if status != 2 || out != "" || !strings.Contains(errOut, tc.says) || !strings.Contains(errOut, "--wait SECONDS (default 0) retries --ready every 5 s") {
			t.Errorf("%q: status %d, stdout %q, want 2 saying %q and the usage:\n%s", tc.args, status, out, tc.says, errOut)
		}
	}
}
