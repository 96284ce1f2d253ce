package boot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// imagePackages are the Debian packages of the test machine: systemd as
// PID 1, cloud-init, the python3 the stand-in and the check script run
// in, ss and ip, and the locale cloud-init's locale module sets (without
// en_US.UTF-8 generated it reports an error).
var imagePackages = []string{
	"systemd", "systemd-sysv", "cloud-init", "python3", "python3-yaml",
	"iproute2", "procps", "locales", "netbase",
}

// imageHooks run in the finished root file system.
var imageHooks = []string{
	`echo "en_US.UTF-8 UTF-8" > "$1/etc/locale.gen"`,
	`chroot "$1" locale-gen`,
	`echo LANG=en_US.UTF-8 > "$1/etc/default/locale"`,
}

const imageSuite = "bookworm"

// cacheDir is where images are kept between runs, outside the clone:
// OMNI_BOOT_CACHE, else the tools directory .ci/run uses.
func cacheDir() string {
	if d := os.Getenv("OMNI_BOOT_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("OMNI_TOOLS_DIR"); d != "" {
		return filepath.Join(d, "boot")
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "terraform-provider-omni", "boot")
}

// imageKey names an image by everything that makes it: a change to the
// package list or a hook builds a new one.
func imageKey() string {
	h := sha256.New()
	fmt.Fprintln(h, imageSuite)
	for _, s := range append(append([]string{}, imagePackages...), imageHooks...) {
		fmt.Fprintln(h, s)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// needBoot skips the test where machines cannot boot: it needs root,
// systemd-nspawn and overlayfs. In CI, where .ci/run installs what it
// needs, each missing piece is a failure instead.
func needBoot(t *testing.T) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (systemd-nspawn, network namespaces and overlay mounts need it)")
	}
	for _, tool := range []string{"systemd-nspawn", "nsenter", "ip", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool+" (Debian: systemd-container, util-linux, iproute2)")
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := "the boot test needs " + strings.Join(missing, ", ")
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; .ci/run installs them")
	}
	t.Skip(msg)
}

// bootImage returns the root file system of the test machine, built once
// with mmdebstrap from Debian's archive and kept in cacheDir. Machines
// boot from overlays of it and never write to it.
func bootImage(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(cacheDir(), "image-"+imageKey())
	if _, err := os.Stat(filepath.Join(dir, "usr", "lib", "systemd", "systemd")); err == nil {
		return dir
	}
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	// One build at a time: a second test run waits for the first's image.
	lock, err := os.OpenFile(filepath.Join(cacheDir(), "image.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "usr", "lib", "systemd", "systemd")); err == nil {
		return dir
	}
	mmdebstrap, err := exec.LookPath("mmdebstrap")
	if err != nil {
		msg := "no boot image in " + cacheDir() + " and no mmdebstrap to build one (Debian: mmdebstrap)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + "; .ci/run installs it")
		}
		t.Skip(msg)
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	args := []string{"--variant=minbase", "--include=" + strings.Join(imagePackages, ",")}
	for _, h := range imageHooks {
		args = append(args, "--customize-hook="+h)
	}
	args = append(args, imageSuite, tmp)
	start := time.Now()
	cmd := exec.Command(mmdebstrap, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(tmp)
		t.Fatalf("mmdebstrap %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("built the boot image %s in %s", dir, time.Since(start).Round(time.Second))
	return dir
}
