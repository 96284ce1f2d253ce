package systemd

import (
	"strings"
	"testing"
)

func directives(lines ...string) []Directive {
	var out []Directive
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		out = append(out, Directive{Key: k, Value: v})
	}
	return out
}

// What each setting does to a path, for a read and for a write, as
// systemd.exec(5) describes it.
func TestSandboxJudge(t *testing.T) {
	s, err := SandboxOf(directives("User=vllm-omni", "ReadWritePaths=/srv/hf", "CacheDirectory=omni", "ProtectSystem=strict",
		"ProtectHome=yes", "PrivateTmp=yes", "PrivateDevices=no", "ProtectKernelTunables=yes", "ProtectKernelModules=yes",
		"ProtectKernelLogs=yes", "ProtectControlGroups=yes", "RemoveIPC=yes", "ReadOnlyPaths=/srv/hf/ro", "InaccessiblePaths=-/srv/secret"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path      string
		read      string // the setting that denies a read, "" for none
		write     string
		writeRoot string
	}{
		{"/home", "ProtectHome=yes", "ProtectHome=yes", "/home"},
		{"/home/me/x", "ProtectHome=yes", "ProtectHome=yes", "/home"},
		{"/homework/x", "", "ProtectSystem=strict", "/"},
		{"/root", "ProtectHome=yes", "ProtectHome=yes", "/root"},
		{"/run/user/1000", "ProtectHome=yes", "ProtectHome=yes", "/run/user"},
		{"/run/users", "", "ProtectSystem=strict", "/"},
		{"/tmp/a", "PrivateTmp=yes", "PrivateTmp=yes", "/tmp"},
		{"/var/tmp", "PrivateTmp=yes", "PrivateTmp=yes", "/var/tmp"},
		{"/var/cache/omni/hub", "", "", ""},
		{"/var/cache/other", "", "ProtectSystem=strict", "/"},
		{"/srv/hf/models", "", "", ""},
		{"/srv/hf/ro/x", "", "ReadOnlyPaths=/srv/hf/ro", "/srv/hf/ro"},
		{"/srv/secret/k", "InaccessiblePaths=-/srv/secret", "InaccessiblePaths=-/srv/secret", "/srv/secret"},
		{"/dev/shm/x", "", "RemoveIPC=yes", "/dev/shm"},
		{"/dev/nvidia0", "", "", ""},
		{"/sys/fs/cgroup/x", "", "ProtectControlGroups=yes", "/sys/fs/cgroup"},
		{"/proc/sys/vm", "", "ProtectKernelTunables=yes", "/proc/sys"},
		{"/proc/kcore", "ProtectKernelTunables=yes", "ProtectKernelTunables=yes", "/proc/kcore"},
		{"/usr/lib/modules/6.1", "ProtectKernelModules=yes", "ProtectKernelModules=yes", "/usr/lib/modules"},
		{"/dev/kmsg", "ProtectKernelLogs=yes", "ProtectKernelLogs=yes", "/dev/kmsg"},
		{"/etc/omni/x.yaml", "", "ProtectSystem=strict", "/"},
		{"/", "", "ProtectSystem=strict", "/"},
	}
	setting := func(d *Denial) string {
		if d == nil {
			return ""
		}
		return d.Setting
	}
	for _, tc := range tests {
		if got := setting(s.Judge(tc.path, Read)); got != tc.read {
			t.Errorf("read %s: denied by %q, want %q", tc.path, got, tc.read)
		}
		d := s.Judge(tc.path, Write)
		if got := setting(d); got != tc.write {
			t.Errorf("write %s: denied by %q, want %q", tc.path, got, tc.write)
		}
		if d != nil && d.Root != tc.writeRoot {
			t.Errorf("write %s: root %s, want %s", tc.path, d.Root, tc.writeRoot)
		}
	}
}

// The other values of the settings read, and nothing but ProtectSystem=strict
// stops a write when it is off.
func TestSandboxValues(t *testing.T) {
	s, err := SandboxOf(directives("ProtectHome=read-only", "ProtectSystem=full", "PrivateTmp=no", "PrivateDevices=yes", "RuntimeDirectory=omni"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][2]string{
		"/home/me":      {"", "ProtectHome=read-only"},
		"/etc/x":        {"", "ProtectSystem=full"},
		"/usr/x":        {"", "ProtectSystem=full"},
		"/var/lib/x":    {"", ""},
		"/tmp/x":        {"", ""},
		"/dev/nvidia0":  {"PrivateDevices=yes", "PrivateDevices=yes"},
		"/run/omni/x":   {"RuntimeDirectory=omni", "RuntimeDirectory=omni"},
		"/run/omnibusx": {"", ""},
	} {
		for i, need := range []Access{Read, Write} {
			got := ""
			if d := s.Judge(path, need); d != nil {
				got = d.Setting
			}
			if got != want[i] {
				t.Errorf("%s (%d): denied by %q, want %q", path, need, got, want[i])
			}
		}
	}
	s, _ = SandboxOf(directives("ProtectHome=tmpfs", "ProtectSystem=yes"))
	if d := s.Judge("/home/me/x", Read); d == nil || d.Setting != "ProtectHome=tmpfs" {
		t.Errorf("ProtectHome=tmpfs: %+v", d)
	}
	if d := s.Judge("/etc/x", Write); d != nil {
		t.Errorf("ProtectSystem=yes leaves /etc writable: %+v", d)
	}
}

// A setting that changes what the processes see of the file system, and
// that the reader does not know, is refused: no setting can be added to a
// unit that the judgement of its paths would miss. So is a value it does
// not read.
func TestSandboxRefusesWhatItDoesNotRead(t *testing.T) {
	for _, d := range []string{"TemporaryFileSystem=/opt", "BindPaths=/a:/b", "RootDirectory=/srv/root", "DynamicUser=yes",
		"MountAPIVFS=yes", "PrivateMounts=yes", "NoExecPaths=/", "ProtectHome=maybe", "PrivateTmp=maybe", "ProtectSystem=partly",
		"CacheDirectory=../x", "CacheDirectory=/x", "ReadWritePaths=relative", "SomeFutureSetting=yes"} {
		if _, err := SandboxOf(directives(d)); err == nil {
			t.Errorf("%s was read", d)
		}
	}
}
