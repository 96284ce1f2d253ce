package systemd

import (
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/bin/vllm", "serve", "Qwen/Qwen3-Omni"}, `/usr/bin/vllm serve Qwen/Qwen3-Omni`},
		{[]string{"/bin/x", "a b", ""}, `/bin/x "a b" ""`},
		{[]string{"/bin/x", `say "hi"`, `back\slash`}, `/bin/x "say \"hi\"" "back\\slash"`},
		{[]string{"/bin/x", "$HOME", "${HOME}", "100%", "%n"}, `/bin/x $$HOME $${HOME} 100%% %%n`},
		{[]string{"/bin/x", "it's", "a;b"}, `/bin/x "it's" "a;b"`},
	}
	for _, tc := range tests {
		got, err := Command(tc.argv)
		if err != nil || got != tc.want {
			t.Errorf("Command(%q) = %q, %v; want %q", tc.argv, got, err, tc.want)
		}
	}
	for _, bad := range [][]string{nil, {"vllm", "serve"}, {"/bin/x", "a\nb"}, {"/bin/x", "tab\there"}} {
		if _, err := Command(bad); err == nil {
			t.Errorf("Command(%q) was accepted", bad)
		}
	}
}

func TestEnvironment(t *testing.T) {
	got, err := Environment("HF_HOME", `/var/cache/a "b" 50%`)
	if want := `"HF_HOME=/var/cache/a \"b\" 50%%"`; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if _, err := Environment("X", "a\nb"); err == nil {
		t.Error("a newline was accepted")
	}
}

func TestRender(t *testing.T) {
	u := Unit{Comment: "one\ntwo", Sections: []Section{
		{Name: "Unit", Directives: []Directive{{Key: "Description", Value: "d"}}},
		{Name: "Service", Directives: []Directive{{Key: "ExecStart", Value: "/bin/true", Comment: "why"}}},
	}}
	want := "# one\n# two\n\n[Unit]\nDescription=d\n\n[Service]\n# why\nExecStart=/bin/true\n"
	if got := u.Render(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if !strings.HasSuffix(Unit{Sections: []Section{{Name: "Install"}}}.Render(), "[Install]\n") {
		t.Error("an empty section is not rendered")
	}
}

// systemd refuses to load a unit that holds a Unicode noncharacter
// anywhere, so neither a command-line argument nor a plain path may carry
// one; the other characters outside ASCII pass as they are.
func TestNoncharactersRefused(t *testing.T) {
	for _, s := range []string{"/models/a\ufdd0", "/opt/\ufffe/vllm", "/x\U0010ffff"} {
		if _, err := Arg(s); err == nil || !strings.Contains(err.Error(), "noncharacter") {
			t.Errorf("Arg(%q) = %v, want a noncharacter error", s, err)
		}
		if err := PlainPath(s); err == nil || !strings.Contains(err.Error(), "noncharacter") {
			t.Errorf("PlainPath(%q) = %v, want a noncharacter error", s, err)
		}
	}
	for _, s := range []string{"/models/qwen-ü", "/opt/模型/vllm"} {
		if _, err := Arg(s); err != nil {
			t.Errorf("Arg(%q): %v", s, err)
		}
		if err := PlainPath(s); err != nil {
			t.Errorf("PlainPath(%q): %v", s, err)
		}
	}
}
