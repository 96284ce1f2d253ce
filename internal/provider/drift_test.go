package provider

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDriftJob_RefreshOnlyExitsZero runs a drift job as an operator does,
// with the built provider and the real CLI: apply, then
// `plan -refresh-only -detailed-exitcode`, which must exit 0 (no drift),
// also after `apply -refresh-only`, and a normal plan after it. The
// provider refreshed numbers into other values than the state file's (the
// same number, another precision: internal/direct's writeReadState),
// and Terraform counted that as drift while it printed "No changes". The
// configurations hold numbers of every kind the state keeps.
func TestDriftJob_RefreshOnlyExitsZero(t *testing.T) {
	tf := mirrorTerraform(t)
	cliConfig := providerMirror(t)
	configs := map[string]string{
		"seed": `model = "` + seedModel + `"`,
		"numbers": `model = "` + seedModel + `"
  api_port       = 8091
  reserved_ports = [25205, 25207]
  prefill = {
    gpu_memory_utilization = 0.85
    max_num_seqs           = 8
    engine_args            = { max_num_batched_tokens = 8192, swap_space = 1.5 }
  }
  decode    = { gpu_memory_utilization = 0.9 }
  connector = { extra_config = { num_threads = 4, backends = ["UCX"] } }
  stage_overrides = { talker = { gpu_memory_utilization = 0.3 } }`,
	}
	for name, body := range configs {
		t.Run(name, func(t *testing.T) {
			run, must := cliRoot(t, tf, cliConfig, `
resource "omni_pd_pipeline" "test" {
  `+body+`
}

output "ports" { value = omni_pd_pipeline.test.ports }

# An output passing on a data source's numbers: Terraform compares the
# outputs too.
data "omni_pd_pipeline" "test" {
  `+body+`
}

output "data_ports" { value = data.omni_pd_pipeline.test.ports }
output "data_prefill" { value = data.omni_pd_pipeline.test.prefill }
`)
			must("apply", "-input=false", "-no-color", "-auto-approve")
			drift := func(when string) {
				t.Helper()
				if code, out := run("plan", "-refresh-only", "-detailed-exitcode", "-input=false", "-no-color"); code != 0 {
					t.Errorf("%s: plan -refresh-only -detailed-exitcode exits %d, want 0 (no drift):\n%s", when, code, out)
				}
			}
			drift("after apply")
			must("apply", "-refresh-only", "-input=false", "-no-color", "-auto-approve")
			drift("after apply -refresh-only")
			if code, out := run("plan", "-detailed-exitcode", "-input=false", "-no-color"); code != 0 {
				t.Errorf("plan -detailed-exitcode exits %d, want 0:\n%s", code, out)
			}
		})
	}
}

// cliRoot writes a root module of body, with the provider's source, into a
// new directory, runs init there, and returns a runner of the CLI in it
// (the exit code and the output) and one that fails the test unless the
// command exits 0.
func cliRoot(t *testing.T, tf, cliConfig, body string) (run func(args ...string) (int, string), must func(args ...string)) {
	t.Helper()
	dir := t.TempDir()
	main := `terraform {
  required_providers {
    omni = { source = "omnipd/omni" }
  }
}
` + body
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	run = func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(tf, append([]string{"-chdir=" + dir}, args...)...)
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0, string(out)
		case errors.As(err, &exit):
			return exit.ExitCode(), string(out)
		}
		t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
		return 0, ""
	}
	must = func(args ...string) {
		t.Helper()
		if code, out := run(args...); code != 0 {
			t.Fatalf("terraform %s exits %d:\n%s", strings.Join(args, " "), code, out)
		}
	}
	must("init", "-input=false", "-backend=false", "-no-color")
	return run, must
}

// TestCLI_UnknownObjects plans and applies, with the built provider (whose
// plans the direct path answers) and the real CLI, the inputs unknown as
// a whole that failed every plan, and the applied pipeline is the one the
// same inputs give when known (TestAccPDPipelineResource_UnknownObjects
// holds the framework's path to the same).
func TestCLI_UnknownObjects(t *testing.T) {
	tf := mirrorTerraform(t)
	run, must := cliRoot(t, tf, providerMirror(t), unknownSources+`
resource "omni_pd_pipeline" "test" {
  model     = "`+seedModel+`"
  prefill   = terraform_data.flag.output ? { engine_args = { max_num_batched_tokens = 8192 } } : null
  decode    = terraform_data.prefill.output
  connector = terraform_data.flag.output ? { extra_config = { num_threads = 4 } } : null
}

resource "omni_pd_pipeline" "known" {
  model     = "`+seedModel+`"
  prefill   = { engine_args = { max_num_batched_tokens = 8192 } }
  decode    = { max_num_seqs = 8, engine_args = { max_num_batched_tokens = 8192, enable_chunked_prefill = true } }
  connector = { extra_config = { num_threads = 4 } }
}

output "same" { value = omni_pd_pipeline.test.id == omni_pd_pipeline.known.id }
`)
	must("apply", "-input=false", "-no-color", "-auto-approve")
	if code, out := run("output", "-raw", "same"); code != 0 || out != "true" {
		t.Errorf("the pipeline planned with unknown inputs differs from the one planned with them known (%d): %s", code, out)
	}
	if code, out := run("plan", "-detailed-exitcode", "-input=false", "-no-color"); code != 0 {
		t.Errorf("the plan after apply exits %d, want 0:\n%s", code, out)
	}
}

// mirrorTerraform is the Terraform CLI the tests that install the provider
// from providerMirror run.
func mirrorTerraform(t *testing.T) string {
	t.Helper()
	return terraformCLI(t, "this test's mirror serves registry.terraform.io addresses only")
}

// terraformCLI is the Terraform CLI of the tests that run it themselves;
// they skip without one, and on OpenTofu, for the reason notTofu gives.
func terraformCLI(t *testing.T, notTofu string) string {
	t.Helper()
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tf == "" {
		t.Skip("needs TF_ACC_TERRAFORM_PATH (scripts/test-env.sh sets it)")
	}
	if cli := cliVersion(t, tf); strings.HasPrefix(cli, "OpenTofu") {
		t.Skipf("%s: %s", cli, notTofu)
	}
	return tf
}
