package testtool

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// mirrorDir is the directory buildMirror made; RemoveProviderMirror
// removes it when a package's tests end.
var mirrorDir string

var buildMirror = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "omni-mirror-")
	if err != nil {
		return "", err
	}
	mirrorDir = dir
	bin := filepath.Join(dir, "registry.terraform.io", "omnipd", "omni", "0.0.1", runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-omni_v0.0.1")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = repoRoot()
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

// repoRoot is the checkout's root: every package that plans examples sits
// two levels below it (internal/<name>).
func repoRoot() string { return filepath.Join("..", "..") }

// ProviderMirror builds the provider once into a filesystem mirror and
// returns a CLI configuration that installs it from there, and nothing
// from the network.
func ProviderMirror(t testing.TB) string {
	t.Helper()
	config, err := buildMirror()
	if err != nil {
		t.Fatalf("building the provider: %v", err)
	}
	return config
}

// RemoveProviderMirror removes the build ProviderMirror made, tens of
// megabytes; a package's TestMain calls it after its tests.
func RemoveProviderMirror() {
	if mirrorDir != "" {
		_ = os.RemoveAll(mirrorDir)
	}
}

// CopyExamples copies examples/ whole, so that the deployments' relative
// module sources resolve, and so that nothing lands in the repository.
func CopyExamples(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "examples")
	src := filepath.Join(repoRoot(), "examples")
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
		// State or a lock file left by a run in the folder itself would
		// change what the test plans.
		if strings.Contains(info.Name(), ".tfstate") || info.Name() == ".terraform.lock.hcl" {
			return nil
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
