package provider

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// The worked examples under examples/deployments call the example modules
// by relative path, which plugin-testing cannot install. So this test runs
// Terraform itself, as a user would: it builds the provider into a local
// filesystem mirror, copies examples/ to a temporary directory, and runs
// `terraform init` and `terraform plan` there, with no network. Every
// cloud-init document a plan renders must pass `cloud-init schema`, and
// every systemd unit inside it `systemd-analyze verify`.
func TestExampleDeployments(t *testing.T) {
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tf == "" {
		t.Skip("needs TF_ACC_TERRAFORM_PATH (scripts/test-env.sh sets it)")
	}
	if cli := cliVersion(t, tf); strings.HasPrefix(cli, "OpenTofu") {
		t.Skipf("%s: OpenTofu checks the examples' required_version >= 1.8.0 against its own version, and this test's mirror serves registry.terraform.io addresses only", cli)
	}
	cliConfig := providerMirror(t)
	examples := copyExamples(t)
	dirs, _ := filepath.Glob(filepath.Join(examples, "deployments", "*"))
	dirs = append(dirs, filepath.Join(examples, "demo"))
	if len(dirs) < 4 {
		t.Fatalf("found %d example roots", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			run := func(args ...string) []byte {
				t.Helper()
				cmd := exec.Command(tf, append([]string{"-chdir=" + dir}, args...)...)
				cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return out
			}
			run("init", "-input=false", "-backend=false", "-no-color")
			run("plan", "-input=false", "-no-color", "-out=plan.bin")
			// Every value the plan knows, outputs and resources alike: a
			// machine's user_data is often only an input of the machine.
			var plan struct {
				PlannedValues map[string]any `json:"planned_values"`
			}
			if err := json.Unmarshal(run("show", "-json", "plan.bin"), &plan); err != nil {
				t.Fatal(err)
			}
			if plan.PlannedValues["outputs"] == nil {
				t.Fatal("the plan has no outputs")
			}
			docs := 0
			seen := map[string]bool{}
			for _, doc := range cloudConfigs(plan.PlannedValues) {
				if seen[doc] {
					continue
				}
				seen[doc] = true
				docs++
				checkCloudConfig(t, filepath.Base(dir), doc)
			}
			if strings.Contains(dir, "deployments") && docs == 0 {
				t.Error("a deployment renders no cloud-init document")
			}
		})
	}
}

// cliVersion is the first line `version` prints: "Terraform v1.8.5",
// "OpenTofu v1.6.3". plugin-testing's version checks cannot tell the two
// apart: OpenTofu reports its own version as terraform_version.
func cliVersion(t *testing.T, tf string) string {
	t.Helper()
	cmd := exec.Command(tf, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s version: %v", tf, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}

// cloudConfigs finds every #cloud-config document in an output value.
func cloudConfigs(v any) []string {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "#cloud-config\n") {
			return []string{x}
		}
	case map[string]any:
		var out []string
		for _, k := range sortedKeysOf(x) {
			out = append(out, cloudConfigs(x[k])...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, cloudConfigs(e)...)
		}
		return out
	}
	return nil
}

func sortedKeysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var execStart = regexp.MustCompile(`(?m)^ExecStart=(\S+)`)

// checkCloudConfig runs cloud-init's own schema check on a document, and
// systemd-analyze verify on every unit it writes, with the unit's vllm
// replaced by a stub (verify wants the executable to exist).
func checkCloudConfig(t *testing.T, output, doc string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "user-data")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cloudInit := testtool.Need(t, "cloud-init")
	if out, err := exec.Command(cloudInit, "schema", "--config-file", path).CombinedOutput(); err != nil {
		t.Errorf("output %s: cloud-init schema: %v\n%s\n%s", output, err, out, doc)
	}
	var parsed struct {
		WriteFiles []struct {
			Path    string `yaml:"path"`
			Content string `yaml:"content"`
		} `yaml:"write_files"`
	}
	if err := yaml.Unmarshal([]byte(doc), &parsed); err != nil {
		t.Fatalf("output %s is not YAML: %v", output, err)
	}
	analyze := testtool.Need(t, "systemd-analyze")
	stub := filepath.Join(dir, "vllm")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	units := 0
	for _, f := range parsed.WriteFiles {
		if !strings.HasPrefix(f.Path, "/etc/systemd/system/") {
			continue
		}
		units++
		unit := execStart.ReplaceAllString(f.Content, "ExecStart="+stub)
		upath := filepath.Join(dir, filepath.Base(f.Path))
		if err := os.WriteFile(upath, []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(analyze, "verify", upath).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("output %s: systemd-analyze verify %s: %v\n%s", output, filepath.Base(f.Path), err, out)
		}
	}
	if units == 0 {
		t.Errorf("output %s writes no systemd unit", output)
	}
}

var buildMirror = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "omni-mirror-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "registry.terraform.io", "omnipd", "omni", "0.0.1", runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-omni_v0.0.1")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	config := filepath.Join(dir, "terraformrc")
	rc := `provider_installation {
  filesystem_mirror {
    path    = "` + dir + `"
    include = ["registry.terraform.io/omnipd/omni"]
  }
  direct {
    exclude = ["registry.terraform.io/omnipd/omni"]
  }
}
`
	return config, os.WriteFile(config, []byte(rc), 0o644)
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// providerMirror builds the provider once into a filesystem mirror and
// returns a CLI configuration that installs it from there, and nothing
// from the network.
func providerMirror(t *testing.T) string {
	t.Helper()
	config, err := buildMirror()
	if err != nil {
		t.Fatalf("building the provider: %v", err)
	}
	return config
}

// copyExamples copies examples/ whole, so that the deployments' relative
// module sources resolve, and so that nothing lands in the repository.
func copyExamples(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "examples")
	src := filepath.Join("..", "..", "examples")
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			if info.Name() == ".terraform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
