package boot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// cdiKind is the kind of NVIDIA's CDI devices: a container asks for GPU N
// with --device nvidia.com/gpu=N, N being the host's index
// (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html).
const cdiKind = "nvidia.com/gpu"

// cdiDirs are where CDI-aware runtimes read specs, the later taking
// precedence; podman 4.3 reads no other (its containers.conf has no
// cdi_spec_dirs yet).
var cdiDirs = []string{"/etc/cdi", "/var/run/cdi"}

// fakeSpecPath is the fake spec's file: one name, so that a run killed
// before its cleanup is overwritten by the next rather than left to
// conflict with it.
const fakeSpecPath = "/var/run/cdi/omni-boot-test.yaml"

// fakeGPUs declares GPUs 0 to n-1 to the container runtime as NVIDIA's
// toolkit does, so that the plan's own device requests resolve on a
// machine with no GPU: each device is a node /dev/nvidiaN (backed by
// /dev/null, which nothing can harm), and any of them brings nvidia-smi
// into the container, as NVIDIA's generated spec mounts the host
// driver's. nvidiaSMI is the file mounted there. The spec is removed when
// the test ends: left in /var/run/cdi it would shadow a real one. It
// skips the test on a machine that has NVIDIA's own spec.
func fakeGPUs(t *testing.T, n int, nvidiaSMI string) {
	t.Helper()
	if other := realSpec(t); other != "" {
		t.Skipf("%s declares %s devices already; a fake spec beside it would conflict with it", other, cdiKind)
	}
	if err := os.MkdirAll(filepath.Dir(fakeSpecPath), 0o755); err != nil {
		t.Fatal(err)
	}
	// One test run at a time holds the spec, which it removes.
	unlock := lockCache(t, "cdi.lock")
	t.Cleanup(func() {
		_ = os.Remove(fakeSpecPath)
		unlock()
	})
	if err := os.WriteFile(fakeSpecPath, []byte(fakeSpec(n, nvidiaSMI)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeSpec is the CDI spec of fakeGPUs (CDI 0.5.0, which podman 4.3
// reads: deviceNodes with a hostPath).
func fakeSpec(n int, nvidiaSMI string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by the container test of terraform-provider-omni; removed when it ends.\n")
	fmt.Fprintf(&b, "cdiVersion: \"0.5.0\"\nkind: %s\ndevices:\n", cdiKind)
	for i := range n {
		fmt.Fprintf(&b, "  - name: \"%d\"\n    containerEdits:\n      deviceNodes:\n        - path: /dev/nvidia%d\n          hostPath: /dev/null\n", i, i)
	}
	fmt.Fprintf(&b, "containerEdits:\n  mounts:\n    - hostPath: %s\n      containerPath: /usr/bin/nvidia-smi\n      options: [ro, nosuid, nodev, bind]\n", nvidiaSMI)
	return b.String()
}

// realSpec is a spec file other than the fake one that declares
// NVIDIA's GPUs, "" when there is none.
func realSpec(t *testing.T) string {
	t.Helper()
	for _, dir := range cdiDirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			if path == fakeSpecPath || e.IsDir() {
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			var spec struct {
				Kind string `yaml:"kind"`
			}
			// YAML reads the JSON specs too.
			if yaml.Unmarshal(b, &spec) == nil && spec.Kind == cdiKind {
				return path
			}
		}
	}
	return ""
}
