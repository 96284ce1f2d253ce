package pipeline

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// The plan's own endpoints are reached directly whatever proxy the host
// names: with http_proxy, https_proxy, all_proxy (either case) pointing at
// a proxy that answers 502 for everything, ready, smoke and the machine
// check's --ready and --smoke still reach the head, and the proxy sees no
// request. Before, urllib sent them through the proxy and a serving head
// was reported not ready.
func TestCheckScriptBypassesTheHostsProxy(t *testing.T) {
	python := machinePython(t)
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		proxied.Add(1)
		http.Error(w, "proxy: no route to the head", http.StatusBadGateway)
	}))
	defer proxy.Close()
	head := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			_, _ = w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"id":"` + seedModel + `"}]}`))
	}))
	defer head.Close()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(strings.ToLower(name), "_proxy") {
			continue
		}
		env = append(env, kv)
	}
	for _, name := range []string{"http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, name+"="+proxy.URL)
	}
	models, chat := head.URL+"/v1/models", head.URL+"/v1/chat/completions"
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"ready", []string{"ready", models, seedModel}, "ready: " + models + " serves"},
		{"smoke", []string{"smoke", chat, seedModel, "vllm-omni-stage@0.service"}, "smoke: " + chat + " answered through prefill and decode"},
		{"machine --ready", []string{"machine", "--ready", models, seedModel}, "ok: ready: "},
		{"machine --smoke", []string{"machine", "--smoke", chat, seedModel, "vllm-omni-stage@0.service"}, "ok: smoke: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := proxied.Load()
			cmd := exec.Command(python, append([]string{checkScriptFile()}, tc.args...)...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), tc.says) {
				t.Errorf("err %v, want %q:\n%s", err, tc.says, out)
			}
			if n := proxied.Load() - before; n != 0 {
				t.Errorf("%d request(s) went through the proxy", n)
			}
		})
	}
}
