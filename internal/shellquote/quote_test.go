package shellquote

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// shellSplit asks a real POSIX shell how it splits line: the shell runs
// printf with the words as arguments, each printed NUL-terminated.
func shellSplit(t testing.TB, line string) []string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `printf '%s\0' `+line)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "X=expanded"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("sh failed on %q: %v: %s", line, err, errb.String())
	}
	s := out.String()
	if !strings.HasSuffix(s, "\x00") {
		t.Fatalf("output %q is not NUL-terminated", s)
	}
	return strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
}

func requireSh(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
}

// hostile are words a model id, a path or a user's engine argument could
// hold, chosen to break a careless quoter.
var hostile = []string{
	"", " ", "  two  spaces  ", "\t", "a\nb", "\n", "trailing\n",
	"'", "''", "it's", `"`, `"quoted"`, `\`, `\\`, `a\`, `\'`, `'\''`,
	"$HOME", "${X}", "$X", "$(id)", "`id`", "$((1+1))", "$", "$'x'",
	"*", "?", "[a]", "~", "~root", "a~", "#", "a#b", "#!",
	"!", "!!", "&", "&&", ";", "|", "||", "<", ">", ">>", "2>&1", "(", ")", "{", "}", "{a,b}",
	"-", "--", "-n", "-e", "--help", "-x=1", "%s", "%b", "%%", "\\0",
	"=", "a=b", "A=1", "@", ":", ",", ".", "..", "/", "./x",
	"Qwen/Qwen3-Omni-30B-A3B-Instruct", "/etc/vllm-omni/deploy-config.yaml",
	"ünïcödé", "模型", "🙂", "\u00a0", "\u200b", "\u202e", "a\rb", "\x7f", "\x01",
}

func TestJoinRoundTripsThroughSh(t *testing.T) {
	requireSh(t)
	for _, w := range hostile {
		t.Run(strings.ToValidUTF8(w, "?"), func(t *testing.T) {
			argv := []string{"first", w, "last"}
			line := Join(argv)
			if got := shellSplit(t, line); !reflect.DeepEqual(got, argv) {
				t.Errorf("Join(%q) = %s; sh splits it into %q", argv, line, got)
			}
		})
	}
	// All at once, so that quoting of one word cannot leak into the next.
	line := Join(hostile)
	if got := shellSplit(t, line); !reflect.DeepEqual(got, hostile) {
		t.Errorf("sh splits the joined hostile list into %d words, want %d:\n%s", len(got), len(hostile), line)
	}
}

func TestQuoteForms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"vllm", "vllm"},
		{"--deploy-config", "--deploy-config"},
		{"/etc/vllm-omni/deploy-config.yaml", "/etc/vllm-omni/deploy-config.yaml"},
		{"Qwen/Qwen3-Omni-30B-A3B-Instruct", "Qwen/Qwen3-Omni-30B-A3B-Instruct"},
		{"8091", "8091"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$(id)", "'$(id)'"},
		{"~", "'~'"},
		{"ü", "'ü'"},
	}
	for _, tc := range tests {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := Join(nil); got != "" {
		t.Errorf("Join(nil) = %q", got)
	}
	if got := Join([]string{"vllm", "serve", "a b"}); got != "vllm serve 'a b'" {
		t.Errorf("Join = %q", got)
	}
}

// TestJoinCommandWord runs the joined line as a command, not as printf's
// arguments: the first word is the program, and the shell must not read it
// as a variable assignment (A=1 prog) or a reserved word (if, while, ...).
func TestJoinCommandWord(t *testing.T) {
	requireSh(t)
	dir := t.TempDir()
	for _, name := range []string{"A=1", "if", "while", "done", "{", "!", "prog"} {
		script := "#!/bin/sh\nprintf '%s\\0' \"$(basename \"$0\")\" \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			argv := []string{name, "x y", "--z"}
			cmd := exec.Command("/bin/sh", "-c", Join(argv))
			cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin"}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("sh -c %s: %v: %s", Join(argv), err, errb.String())
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\x00"), "\x00")
			if !reflect.DeepEqual(got, argv) {
				t.Errorf("sh -c %s ran %q, want %q", Join(argv), got, argv)
			}
		})
	}
}

// FuzzJoin: any words without NUL (which argv cannot hold) survive Join
// and a real shell's word splitting.
func FuzzJoin(f *testing.F) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		f.Skip("no /bin/sh")
	}
	for _, w := range hostile {
		f.Add(w, "--omni", "x")
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		argv := []string{a, b, c}
		for _, w := range argv {
			if strings.IndexByte(w, 0) >= 0 {
				t.Skip("argv cannot hold NUL")
			}
		}
		line := Join(argv)
		if strings.IndexByte(line, 0) >= 0 {
			t.Fatal("Join produced a NUL")
		}
		if got := shellSplit(t, line); !reflect.DeepEqual(got, argv) {
			t.Fatalf("Join(%q) = %q; sh splits it into %q", argv, line, got)
		}
	})
}
