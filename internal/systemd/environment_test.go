package systemd

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/envvar"
	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// rawEnvironment writes an Environment= value as Environment does, without
// its check, so that systemd can be shown what the rule refuses.
func rawEnvironment(name, value string) string {
	v := strings.ReplaceAll(name+"="+value, "%", "%%")
	v = strings.ReplaceAll(v, `\`, `\\`)
	v = strings.ReplaceAll(v, `"`, `\"`)
	return `"` + v + `"`
}

// The environment rule against systemd itself: each variable in a unit of
// its own, handed to systemd-analyze verify together. What the rule takes,
// as Environment renders it, systemd takes without a word; what it refuses
// for its name or for a noncharacter, systemd ignores or fails the unit on,
// or, for a name with "=", takes as another variable.
// (Control characters the rule refuses though systemd would take some of
// them escaped: the renderer writes none.) Names and values from a table and
// at random.
func TestEnvironmentRuleIsSystemds(t *testing.T) {
	analyze := testtool.Need(t, "systemd-analyze")
	type variable struct{ name, value string }
	vars := []variable{
		{"A", "x"}, {"_", "1"}, {"a_1", ""}, {"HF_HOME", `/var/cache/a "b" 50% $HOME \ ;#`}, {"X", "é😀\u2028\ufeff"},
		{"A-B", "1"}, {"1X", "2"}, {"", "3"}, {"É", "1"}, {"A.B", "1"}, {"A B", "1"}, {"A=B", "1"}, {"A", "\ufdd0"}, {"A", "x\uffff"}, {"A", "\U0010fffe"},
	}
	r := rand.New(rand.NewPCG(23, 2))
	nameRunes := []rune("AZaz09_-.:= é$%\"\\")
	valueRunes := []rune("az09 _-=;#$%\"'\\é😀\u2028\ufeff\ufdd0\ufdef\ufffe\u00a0")
	pick := func(alphabet []rune, n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 300 {
		vars = append(vars, variable{pick(nameRunes, r.IntN(6)), pick(valueRunes, r.IntN(8))})
	}
	dir := t.TempDir()
	var files []string
	accepted := map[string]bool{}
	for i, v := range vars {
		line, err := Environment(v.name, v.value)
		if (err == nil) != (envvar.Check(v.name, v.value) == nil) {
			t.Fatalf("%q=%q: Environment and envvar disagree: %v", v.name, v.value, err)
		}
		if err != nil {
			line = rawEnvironment(v.name, v.value)
		}
		file := filepath.Join(dir, fmt.Sprintf("e%d.service", i))
		if err := os.WriteFile(file, []byte("[Service]\nType=exec\nExecStart=/bin/true\nEnvironment="+line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
		accepted[file] = err == nil
	}
	out, _ := exec.Command(analyze, append([]string{"verify"}, files...)...).CombinedOutput()
	complained := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range files {
			if strings.HasPrefix(line, f+":") || strings.Contains(line, "Unit "+filepath.Base(f)+" ") {
				complained[f] = true
			}
		}
	}
	for i, f := range files {
		if strings.Contains(vars[i].name, "=") && !accepted[f] && !complained[f] {
			continue // systemd sets the name before the first =: another variable, as silently
		}
		if accepted[f] == complained[f] {
			t.Errorf("%q=%q: the rule says %v, systemd complained %v", vars[i].name, vars[i].value, accepted[f], complained[f])
		}
	}
	if t.Failed() {
		t.Logf("systemd-analyze:\n%s", out)
	}
}

// What the rule takes, Environment writes as one word that systemd's
// quoting rules (systemd.syntax(7): inside double quotes, \\ and \" are
// the backslash and the quote; %% is %) read back as NAME=value.
func FuzzEnvironment(f *testing.F) {
	for _, s := range [][2]string{{"A", "x"}, {"A-B", "1"}, {"HF_HOME", `/a "b" 50% \`}, {"", ""}, {"A", "a\nb"}, {"A", "\ufdd0"}, {"1X", "é"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		line, err := Environment(name, value)
		if err != nil {
			if envvar.Check(name, value) == nil {
				t.Fatalf("%q=%q refused: %v", name, value, err)
			}
			return
		}
		if got := readQuotedWord(t, line); got != name+"="+value {
			t.Fatalf("%q reads back as %q", line, got)
		}
		// And the rule itself: systemd's name (letters, digits, _, not
		// first a digit), valid UTF-8 without controls or noncharacters.
		for i, c := range name {
			letter := c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
			if digit := c >= '0' && c <= '9'; !letter && (!digit || i == 0) {
				t.Fatalf("name %q taken", name)
			}
		}
		if name == "" {
			t.Fatal("an empty name taken")
		}
	})
}

// readQuotedWord reads one double-quoted word as systemd does
// (systemd.syntax(7): inside double quotes, \\ and \" are the backslash and
// the quote; %% is %), failing on anything else systemd would read
// otherwise: a bare quote or backslash, a specifier, a line break.
func readQuotedWord(t *testing.T, line string) string {
	t.Helper()
	if !strings.HasPrefix(line, `"`) || !strings.HasSuffix(line, `"`) || len(line) < 2 || strings.ContainsAny(line, "\n\r") {
		t.Fatalf("not one quoted word: %q", line)
	}
	var b strings.Builder
	inner := line[1 : len(line)-1]
	for i := 0; i < len(inner); i++ {
		switch c := inner[i]; {
		case c == '\\' && i+1 < len(inner) && (inner[i+1] == '\\' || inner[i+1] == '"'):
			b.WriteByte(inner[i+1])
			i++
		case c == '\\' || c == '"':
			t.Fatalf("%q: a bare %c", line, c)
		case c == '%' && i+1 < len(inner) && inner[i+1] == '%':
			b.WriteByte('%')
			i++
		case c == '%':
			t.Fatalf("%q: a specifier", line)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
