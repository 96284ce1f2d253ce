// Package testtool finds the external tools the tests run (systemd-analyze,
// cloud-init, bash) and builds the protocol values several packages' tests
// send. Only tests import it.
package testtool

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// Need returns the path of a command the test runs. Where it is missing the
// test is skipped, except in CI (CI set), where .ci/run installs it and a
// missing one is a failure.
func Need(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run installs it", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return path
}

// Python returns a python3 that can import every module named: Debian's
// first (where .ci/run installs python3-yaml and python3-omegaconf), then
// the one on PATH. Where none can, the test is skipped, except in CI, where
// it is a failure.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	script := "pass"
	for _, m := range modules {
		script += "; import " + m
	}
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", script).Run() == nil {
			return py
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("no python3 can import %v; .ci/run installs them", modules)
	}
	t.Skipf("no python3 with %v", modules)
	return ""
}

// ExitStatus is the exit status of a command that ran, from the error its
// Run or Output returned: 0 for none, the status for an exit error. Any
// other error (the command could not start) fails the test.
func ExitStatus(t testing.TB, err error) int {
	t.Helper()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}
