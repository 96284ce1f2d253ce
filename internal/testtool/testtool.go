// Package testtool finds the external tools the tests run (systemd-analyze,
// cloud-init, bash). Only tests import it.
package testtool

import (
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
