package boot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// Where vllm-omni's CUDA image keeps what a unit runs. vllm-omni's layer
// (docker/Dockerfile.cuda@d4a869fe:4-22) installs into the Python of its
// base, vllm/vllm-openai, clears its entrypoint and works in /app. That
// base installs vLLM into the system Python, /usr/bin/python3, with
// `uv pip install --system`, which puts the vllm script in /usr/local/bin
// and the packages in /usr/local/lib/python3.X/dist-packages (vLLM's
// docker/Dockerfile, stage vllm-base). It runs as root.
const (
	officialPython  = "/usr/bin/python3"
	officialVLLM    = "/usr/local/bin/vllm"
	officialWorkdir = "/app"
	standinRepo     = "localhost/vllm-omni-standin"
	standinLabel    = "org.omnipd.standin"
)

// officialSettings are the settings of the official image the test image
// copies: no entrypoint, /app, and the variables of NVIDIA's CUDA
// base a unit must not rely on (NVIDIA_VISIBLE_DEVICES=all makes
// NVIDIA's runtime give a container every GPU unless it asks for some).
var officialSettings = []string{
	"ENTRYPOINT []",
	"WORKDIR " + officialWorkdir,
	"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"ENV NVIDIA_VISIBLE_DEVICES=all",
}

// standinImageRef is the test image of release r, named as the official
// image is tagged: vllm/vllm-omni:v0.24.0 is localhost/...:v0.24.0 here.
func standinImageRef(r releases.Release) string { return standinRepo + ":v" + r.Version }

// containerStandin is the stand-in vllm-omni install at the official
// image's paths. nvidia-smi is not in it: as in the official image, it
// comes with the GPUs a container is given (fakeGPUs).
func containerStandin(t *testing.T, r releases.Release, python string) map[string]file {
	t.Helper()
	files := standin{release: r, python: python, unitPy: officialPython, vllm: officialVLLM}.files(t)
	delete(files, "/usr/local/bin/nvidia-smi")
	delete(files, gpuCountFile)
	return files
}

// standinImage returns the test image of release r, kept in podman's
// store under its label so that a change to the boot image, the stand-in
// or the image settings builds a new one. It is built as the official
// image is, in two layers and with no registry: a base, the boot image's
// root file system (standinBase), and the stand-in vllm-omni install
// copied onto it.
func standinImage(t *testing.T, p podman, r releases.Release) string {
	t.Helper()
	rootfs := bootImage(t)
	files := containerStandin(t, r, imagePython(t, rootfs))
	key := standinKey(files)
	ref := standinImageRef(r)
	if imageLabel(p, ref) == key {
		return ref
	}
	// One build at a time: a second test run waits for the first's image.
	unlock := lockCache(t, "standin-image.lock")
	defer unlock()
	if imageLabel(p, ref) == key {
		return ref
	}
	start := time.Now()
	base := standinBase(t, p, rootfs)
	context := t.TempDir()
	// The files are laid out as in a machine's root, which context is.
	staged := &machine{root: context}
	for path, f := range files {
		staged.write(t, path, f)
	}
	if err := os.MkdirAll(filepath.Join(context, officialWorkdir), 0o755); err != nil {
		t.Fatal(err)
	}
	containerfile := "FROM " + base + "\nCOPY . /\n" + strings.Join(officialSettings, "\n") + "\nLABEL " + standinLabel + "=" + key + "\n"
	path := filepath.Join(t.TempDir(), "Containerfile")
	if err := os.WriteFile(path, []byte(containerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	p.must(t, "build", "--pull=never", "--file", path, "--tag", ref, context)
	t.Logf("built the image %s (%s) in %s", ref, key, time.Since(start).Round(time.Second))
	return ref
}

// standinBase is the boot image's root file system as an image, imported
// once per boot image.
func standinBase(t *testing.T, p podman, rootfs string) string {
	t.Helper()
	ref := standinRepo + "-base:" + imageKey()
	if imageLabel(p, ref) == imageKey() {
		return ref
	}
	tarArgs := []string{"-C", rootfs, "-c", "."}
	tar := exec.Command("tar", tarArgs...)
	var tarErr strings.Builder
	tar.Stderr = &tarErr
	stream, err := tar.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"import", "--change", "LABEL " + standinLabel + "=" + imageKey(), "-", ref}
	imp := p.command("", args...)
	imp.Stdin = stream
	if err := tar.Start(); err != nil {
		t.Fatal(err)
	}
	out, impErr := imp.CombinedOutput()
	// Whatever podman left unread, so that tar can end.
	_, _ = io.Copy(io.Discard, stream)
	if err := tar.Wait(); err != nil {
		t.Fatalf("tar %s: %v\n%s", strings.Join(tarArgs, " "), err, tarErr.String())
	}
	if impErr != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), impErr, out)
	}
	return ref
}

// lockCache takes the lock file name in cacheDir, and returns its
// release.
func lockCache(t *testing.T, name string) func() {
	t.Helper()
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(cacheDir(), name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { _ = lock.Close() }
}

// standinKey names the test image by everything that makes it.
func standinKey(files map[string]file) string {
	h := sha256.New()
	fmt.Fprintln(h, imageKey())
	for _, c := range officialSettings {
		fmt.Fprintln(h, c)
	}
	for _, path := range slices.Sorted(maps.Keys(files)) {
		f := files[path]
		fmt.Fprintf(h, "%s %o %q %q\n", path, f.mode, f.link, f.content)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// imageLabel is the standinLabel of the image ref, "" when there is
// none.
func imageLabel(p podman, ref string) string {
	out, err := p.command("", "image", "inspect", "--format", "{{index .Labels \""+standinLabel+"\"}}", ref).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
