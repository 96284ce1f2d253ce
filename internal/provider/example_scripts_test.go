package provider

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// scriptEnv is the environment the scripts run in: the test's own, with
// the given variables set over it.
func scriptEnv(vars ...string) []string {
	env := os.Environ()
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
	}
	return append(env, vars...)
}

// skipScriptsWithoutTerraform skips where the scripts' plans cannot run:
// with no CLI and on OpenTofu (the deployments require Terraform >= 1.8.0).
func skipScriptsWithoutTerraform(t *testing.T) string {
	t.Helper()
	return terraformCLI(t, "the examples declare required_version >= 1.8.0, which OpenTofu checks against its own version")
}

// `make dev-env` (scripts/dev-env.sh) prints one line, the export of a CLI
// config in the cache dir whose dev_overrides point at a fresh build, and
// writes no ~/.terraformrc; with that config alone, an example plans
// without `terraform init`.
func TestExampleScripts_DevEnv(t *testing.T) {
	tf := skipScriptsWithoutTerraform(t)
	bash := testtool.Need(t, "bash")
	tmp := t.TempDir()
	home, cache := filepath.Join(tmp, "home"), filepath.Join(tmp, "cache")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	// HOME moves, so the Go caches are named where they already are.
	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	caches := strings.Fields(string(goEnv))
	if len(caches) != 3 {
		t.Fatalf("go env: %q", goEnv)
	}
	cmd := exec.Command(bash, filepath.Join("..", "..", "scripts", "dev-env.sh"))
	cmd.Env = scriptEnv("HOME="+home, "XDG_CACHE_HOME="+cache, "OMNI_DEV_DIR=",
		"GOCACHE="+caches[0], "GOMODCACHE="+caches[1], "GOPATH="+caches[2])
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dev-env.sh: %v\n%s", err, stderr.String())
	}
	dir := filepath.Join(cache, "terraform-provider-omni", "dev")
	rc := filepath.Join(dir, "terraformrc")
	if want := "export TF_CLI_CONFIG_FILE=" + rc + "\n"; string(out) != want {
		t.Errorf("stdout is %q, want only %q", out, want)
	}
	src, err := os.ReadFile(rc)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"omnipd/omni" = "` + filepath.Join(dir, "plugins") + `"`; !strings.Contains(string(src), "dev_overrides {\n    "+want) {
		t.Errorf("%s does not point omnipd/omni at the build (%s):\n%s", rc, want, src)
	}
	if info, err := os.Stat(filepath.Join(dir, "plugins", "terraform-provider-omni")); err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("no executable build beside the config: %v", err)
	}
	// Go may keep its own settings under the home directory; Terraform's
	// files there must not appear.
	for _, name := range []string{".terraformrc", ".terraform.d"} {
		if _, err := os.Lstat(filepath.Join(home, name)); err == nil {
			t.Errorf("dev-env.sh wrote ~/%s", name)
		}
	}

	// The demo, planned with that config and nothing else.
	config := filepath.Join(tmp, "demo")
	if err := os.Mkdir(config, 0o755); err != nil {
		t.Fatal(err)
	}
	demo, err := os.ReadFile(filepath.Join("..", "..", "examples", "demo", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "main.tf"), demo, 0o644); err != nil {
		t.Fatal(err)
	}
	plan := exec.Command(tf, "-chdir="+config, "plan", "-input=false", "-no-color")
	plan.Env = scriptEnv("TF_CLI_CONFIG_FILE="+rc, "HOME="+home, "CHECKPOINT_DISABLE=1")
	got, err := plan.CombinedOutput()
	if err != nil {
		t.Fatalf("terraform plan with the printed config: %v\n%s", err, got)
	}
	for _, want := range []string{"Provider development overrides are in effect", "launch", "vllm-omni-stage@0.service"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the plan does not show %q:\n%s", want, got)
		}
	}
}

// scripts/demo.sh runs any example folder: examples/demo and the data
// source's snippet are applied and their config and command printed, and a
// deployment that calls a module by a relative path
// is copied with that module, which `terraform get` installs, and planned.
func TestExampleScripts_Demo(t *testing.T) {
	skipScriptsWithoutTerraform(t)
	bash := testtool.Need(t, "bash")
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{"", []string{"# deploy_config", "stage_args:", "# launch (the head: stage 0 and the API)", "--stage-id 0", "vllm-omni-stage@3.service"}},
		// The registry snippet names the head's command serve_command.
		{"examples/data-sources/omni_pd_pipeline", []string{"# deploy_config", "stage_args:", "# serve_command (the head: stage 0 and the API)"}},
		{"examples/deployments/one-host-two-pipelines", []string{
			"- host in ../../modules/pd-host-packing",
			"Plan: 6 to add, 0 to change, 0 to destroy.",
			`"pipeline-1/api" = 8092`,
			"vllm-omni-1-stage@3.service",
		}},
	} {
		t.Run("dir="+c.dir, func(t *testing.T) {
			args := []string{filepath.Join("..", "..", "scripts", "demo.sh")}
			if c.dir != "" {
				args = append(args, filepath.Join("..", "..", filepath.FromSlash(c.dir)))
			}
			tmp := t.TempDir()
			cmd := exec.Command(bash, args...)
			cmd.Env = scriptEnv("TMPDIR=" + tmp)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("demo.sh %s: %v\n%s", c.dir, err, out)
			}
			for _, want := range c.want {
				if !strings.Contains(string(out), want) {
					t.Errorf("demo.sh %s does not print %q:\n%s", c.dir, want, out)
				}
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("demo.sh left %v behind", left)
			}
		})
	}
}
