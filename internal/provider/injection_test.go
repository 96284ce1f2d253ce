package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// The launch commands are shell text that users paste into cloud-init, and
// model and config_path end up in them. Whatever those hold, the shell must
// see exactly serve_args and run nothing else. These tests feed hostile
// values through Terraform and hand the outputs to a real /bin/sh.

// injectionMarkers are the files a successful injection would create, one
// per way a shell runs code: $(...), backticks, ;, &, | and a > redirect.
// The payloads only ever create these files: a broken quoting must fail the
// test, never harm the machine that runs it.
type injectionMarkers struct{ prefix string }

func newInjectionMarkers(t *testing.T) injectionMarkers {
	t.Helper()
	m := injectionMarkers{prefix: fmt.Sprintf("/tmp/omni-injection-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"))}
	for _, f := range m.files() {
		_ = os.Remove(f)
		t.Cleanup(func() { _ = os.Remove(f) })
	}
	return m
}

var injectionKinds = []string{"dollar", "backtick", "semicolon", "amp", "pipe", "redirect"}

func (m injectionMarkers) file(kind string) string { return m.prefix + "-" + kind }

func (m injectionMarkers) files() []string {
	out := make([]string, len(injectionKinds))
	for i, k := range injectionKinds {
		out[i] = m.file(k)
	}
	return out
}

// check fails when any marker exists.
func (m injectionMarkers) check() error {
	for _, f := range m.files() {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("injected code ran: %s exists", f)
		}
	}
	return nil
}

// hostilePath is an absolute path under dir holding every character a
// shell treats specially: spaces, both quotes, $(...), backticks, ;, &, |,
// < and >, globs, ~, #, !, braces, a backslash and $VAR forms.
func (m injectionMarkers) hostilePath(dir string) string {
	return dir + `/my models/it's "q" $(touch ` + m.file("dollar") + `) ` + "`touch " + m.file("backtick") + "`" +
		`; touch ` + m.file("semicolon") + ` & touch ` + m.file("amp") + ` | touch ` + m.file("pipe") +
		` > ` + m.file("redirect") + ` < /dev/null * ? ~ #!{a,b} \n $HOME ${HOME}`
}

// hclString quotes s as an HCL string literal; ${ and %{ are escaped so
// Terraform keeps them as text.
func hclString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "${", "$${", "%{", "%%{", "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// shellWords asks /bin/sh to split command into words, the way it would
// before running it, and returns them. The command's first word is never
// run: eval only sets the positional parameters, which printf prints.
func shellWords(t *testing.T, command string) []string {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", `eval "set -- $1" && printf '%s\0' "$@"`, "sh", command).Output()
	if err != nil {
		t.Fatalf("/bin/sh could not parse %q: %v", command, err)
	}
	words := strings.Split(string(out), "\x00")
	return words[:len(words)-1] // printf ends every word with NUL
}

// flatList reads a list of strings from flatmapped state attributes.
func flatList(attrs map[string]string, prefix string) ([]string, error) {
	n, err := strconv.Atoi(attrs[prefix+".#"])
	if err != nil {
		return nil, fmt.Errorf("%s.# = %q", prefix, attrs[prefix+".#"])
	}
	out := make([]string, n)
	for i := range out {
		out[i] = attrs[prefix+"."+strconv.Itoa(i)]
	}
	return out, nil
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAccPDPipeline_ShellInjection(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	markers := newInjectionMarkers(t)
	configPath := markers.hostilePath("/etc/omni") + ".yaml"
	model := markers.hostilePath("/models") + "/Qwen3-Omni-30B-A3B-Instruct"
	const addr = "data.omni_pd_pipeline.test"

	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model       = ` + hclString(model) + `
  config_path = ` + hclString(configPath) + `
}
`,
		Check: func(s *terraform.State) error {
			attrs := s.RootModule().Resources[addr].Primary.Attributes
			args, err := flatList(attrs, "serve_args")
			if err != nil {
				return err
			}
			// The values reach argv unchanged...
			if len(args) < 8 || args[2] != model || !containsPair(args, "--stage-configs-path", configPath) {
				return fmt.Errorf("serve_args = %q; want the model and config_path verbatim", args)
			}
			// ...and the shell reads serve_command back as exactly that argv.
			if words := shellWords(t, attrs["serve_command"]); !equalWords(words, args) {
				return fmt.Errorf("/bin/sh splits serve_command\n%s\ninto %q,\nnot serve_args %q", attrs["serve_command"], words, args)
			}
			// One host, one process per stage (the default release
			// applies no runtime.env in a whole-pipeline process), each an
			// instance of the template: read as systemd reads it, every
			// unit runs vllm with the values verbatim, and the head's is
			// serve_args.
			np, _ := strconv.Atoi(attrs["launches.0.processes.#"])
			if np != 4 {
				return fmt.Errorf("launches[0] has %d processes, want one per stage (4)", np)
			}
			for j := 0; j < np; j++ {
				prefix := "launches.0.processes." + strconv.Itoa(j)
				words, err := processCommand(attrs, prefix)
				if err != nil {
					return err
				}
				argv := vllmArgs(words)
				if len(argv) < 3 || argv[2] != model || !containsPair(argv, "--stage-configs-path", configPath) {
					return fmt.Errorf("%s's unit runs %q; want the model and config_path verbatim", prefix, argv)
				}
				if j == 0 && !equalWords(argv[1:], args[1:]) {
					return fmt.Errorf("the head's unit runs %q, not serve_args %q", argv, args)
				}
			}
			t.Logf("serve_command: %s", attrs["serve_command"])
			return markers.check()
		},
	})
}

// Across hosts, each stage's unit is run here for real, as systemd reads
// it, from vllm on: a stand-in `vllm` records its arguments, so each
// process must get the model and config_path verbatim and nothing else may
// run.
func TestAccPDPipeline_ShellInjectionMultiHost(t *testing.T) {
	markers := newInjectionMarkers(t)
	configPath := markers.hostilePath("/etc/omni") + ".yaml"
	model := markers.hostilePath("/models") + "/Qwen3-Omni-30B-A3B-Instruct"
	const addr = "data.omni_pd_pipeline.test"

	bin := t.TempDir()
	record := filepath.Join(bin, "calls")
	fake := filepath.Join(bin, "vllm")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf '%s\\0' \"$@\" >\"$OMNI_RECORD\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	accTest(t, resource.TestStep{
		Config: `
data "omni_pd_pipeline" "test" {
  model       = ` + hclString(model) + `
  config_path = ` + hclString(configPath) + `
  prefill     = { host = "10.0.0.1" }
  decode      = { host = "10.0.0.2" }
}
`,
		Check: func(s *terraform.State) error {
			attrs := s.RootModule().Resources[addr].Primary.Attributes
			n, _ := strconv.Atoi(attrs["launches.#"])
			if n != 2 {
				return fmt.Errorf("%d launches, want 2", n)
			}
			processes := 0
			for i := 0; i < n; i++ {
				np, _ := strconv.Atoi(attrs["launches."+strconv.Itoa(i)+".processes.#"])
				for j := 0; j < np; j++ {
					prefix := "launches." + strconv.Itoa(i) + ".processes." + strconv.Itoa(j)
					words, err := processCommand(attrs, prefix)
					if err != nil {
						return err
					}
					argv := vllmArgs(words)
					if len(argv) == 0 {
						return fmt.Errorf("%s's unit runs no vllm: %q", prefix, words)
					}
					out := record + strconv.Itoa(i) + "-" + strconv.Itoa(j)
					cmd := exec.Command(fake, argv[1:]...)
					cmd.Env = append(os.Environ(), "OMNI_RECORD="+out)
					if msg, err := cmd.CombinedOutput(); err != nil {
						return fmt.Errorf("running %s's command: %v\n%s", prefix, err, msg)
					}
					call, err := os.ReadFile(out)
					if err != nil {
						return err
					}
					args := strings.Split(strings.TrimSuffix(string(call), "\x00"), "\x00")
					processes++
					if len(args) < 2 || args[0] != "serve" || args[1] != model || !containsPair(args, "--stage-configs-path", configPath) {
						return fmt.Errorf("%s's unit ran vllm %q; want the model and config_path verbatim", prefix, args)
					}
				}
			}
			if processes != 4 {
				return fmt.Errorf("the units started %d vllm processes, want one per stage (4)", processes)
			}
			return markers.check()
		},
	})
}

func containsPair(args []string, flag, value string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag && args[i+1] == value {
			return true
		}
	}
	return false
}
