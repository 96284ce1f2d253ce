package boot

import (
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// The stand-in vllm-omni install, where the plan's units look for it: a
// virtual environment where the unit's Python is one (a directory with
// bin/python3, as `python3 -m venv` makes), else the image's own Python
// with packages in its /usr/local site directory, as `pip install` as root
// leaves them on Debian. Its vllm is standin/vllm; its site-packages hold
// what the check script looks for: the dist-info records of vllm-omni and
// vLLM at the planned versions, the modules a deploy config names, and the
// transports' Python packages.
const (
	standinDir   = "/etc/vllm-standin"
	gpuCountFile = standinDir + "/gpus"
)

// schedulers are the scheduler classes vllm-omni ships that the presets'
// configs name (vllm_omni/core/sched/*.py at every release the table
// reads); the preflight imports each one a config names.
var schedulers = map[string][]string{
	"vllm_omni.core.sched.omni_ar_scheduler":         {"OmniARScheduler"},
	"vllm_omni.core.sched.omni_generation_scheduler": {"OmniGenerationScheduler"},
}

// transports are the Python packages of the KV and edge transports, by the
// module the check script imports for each.
var transports = []string{"nixl._api", "mooncake.engine"}

// standin is what a machine holds of vllm-omni: the release it was built
// for, where, and how many GPUs nvidia-smi shows.
type standin struct {
	release releases.Release
	gpus    int
	python  string // "python3.11": the image's Python, for site-packages
	unitPy  string // the Python the units run, /opt/vllm-omni/bin/python3
	vllm    string // the vllm the units run, /opt/vllm-omni/bin/vllm
}

// files are the stand-in's files, by their path on the machine.
func (s standin) files(t *testing.T) map[string]file {
	t.Helper()
	engine := readStandin(t, "vllm")
	_, body, _ := strings.Cut(engine, "\n")
	files := map[string]file{
		s.vllm:                       {content: "#!" + s.unitPy + "\n" + body, mode: 0o755},
		standinDir + "/release.json": {content: releaseFacts(t, s.release)},
		"/usr/local/bin/nvidia-smi":  {content: readStandin(t, "nvidia-smi"), mode: 0o755},
		gpuCountFile:                 {content: strconv.Itoa(s.gpus) + "\n"},
	}
	site := path.Join("/usr/local/lib", s.python, "dist-packages")
	if bin := path.Dir(s.unitPy); bin != "/usr/bin" && bin != "/bin" && !strings.Contains(s.unitPy, " ") {
		venv := path.Dir(bin)
		site = path.Join(venv, "lib", s.python, "site-packages")
		files[venv+"/pyvenv.cfg"] = file{content: "home = /usr/bin\ninclude-system-site-packages = true\nversion = " +
			strings.TrimPrefix(s.python, "python") + "\n"}
		files[s.unitPy] = file{link: "/usr/bin/" + s.python}
	}
	for name, version := range map[string]string{"vllm_omni": s.release.Version, "vllm": s.release.VLLM + ".0"} {
		files[path.Join(site, name+"-"+version+".dist-info", "METADATA")] = file{
			content: "Metadata-Version: 2.1\nName: " + strings.ReplaceAll(name, "_", "-") + "\nVersion: " + version + "\n"}
	}
	modules := map[string][]string{}
	for m, names := range s.release.Processors.Modules {
		modules[m] = names
	}
	for m, names := range schedulers {
		modules[m] = names
	}
	for _, m := range transports {
		modules[m] = nil
	}
	for _, m := range slices.Sorted(maps.Keys(modules)) {
		for f, content := range modulePackage(site, m, modules[m]) {
			files[f] = file{content: content}
		}
	}
	if s.release.Registry != nil {
		for f, content := range registryPackage(t, site) {
			files[f] = file{content: content}
		}
	}
	return files
}

// registryPackage is the stand-in's vllm-omni pipeline registry, its
// dataclasses and its CLI's module (standin/vllm_omni), in the site
// directory, with the packages above each: what the units' launcher
// imports, on a release that has a registry.
func registryPackage(t *testing.T, site string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join("standin", "vllm_omni")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("standin", p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		for i := 1; i < len(parts); i++ {
			if init := path.Join(site, path.Join(parts[:i]...), "__init__.py"); out[init] == "" {
				out[init] = ""
			}
		}
		out[path.Join(site, filepath.ToSlash(rel))] = readStandin(t, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// modulePackage writes module m, with a stub for each name, and the
// packages above it.
func modulePackage(site, m string, names []string) map[string]string {
	out := map[string]string{}
	parts := strings.Split(m, ".")
	for i := 1; i < len(parts); i++ {
		out[path.Join(site, path.Join(parts[:i]...), "__init__.py")] = ""
	}
	var b strings.Builder
	b.WriteString("# Stand-in for the installed module: the names the release ships.\n")
	for _, n := range names {
		if n[0] >= 'A' && n[0] <= 'Z' {
			b.WriteString("class " + n + ":\n    pass\n")
		} else {
			b.WriteString("def " + n + "(*args, **kwargs):\n    return None\n")
		}
	}
	out[path.Join(site, path.Join(parts...)+".py")] = b.String()
	return out
}

// releaseFacts is release.json: the facts of the release table the
// stand-in acts on, the flags `vllm serve` accepts first.
func releaseFacts(t *testing.T, r releases.Release) string {
	t.Helper()
	facts := struct {
		Version string            `json:"version"`
		Flags   []string          `json:"flags"`
		Loaders map[string]string `json:"loaders"` // flag: the dialect it loads
	}{Version: r.Version, Loaders: map[string]string{}}
	for _, l := range r.Loaders {
		facts.Flags = append(facts.Flags, l.Flag)
		facts.Loaders[l.Flag] = l.Dialect
	}
	facts.Flags = append(facts.Flags, r.StageCLI.Names...)
	b, err := json.Marshal(facts)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func readStandin(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("standin", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// imagePython is the image's python3, "python3.11".
func imagePython(t *testing.T, image string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(image, "usr", "lib", "python3.*"))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(image, "usr", "bin", filepath.Base(d))); err == nil {
			return filepath.Base(d)
		}
	}
	t.Fatalf("the boot image %s has no python3.x", image)
	return ""
}
