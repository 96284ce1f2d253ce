package pipeline

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
)

// update rewrites the golden files: go test ./internal/pipeline/ -run Golden -update.
var update = flag.Bool("update", false, "rewrite testdata/golden files from the current output")

const seedModel = "Qwen/Qwen3-Omni-30B-A3B-Instruct"

// The connector classes the tests name; the planner itself knows them
// only as entries of kvconnector.Entries.
const (
	connectorMooncake = kvconnector.Mooncake
	connectorNixl     = kvconnector.Nixl
	connectorP2pNccl  = kvconnector.P2pNccl
	connectorLMCache  = kvconnector.LMCache
)

// Where test inputs live. The shared folder sits beside the repository in
// CI (<dir>/main and <dir>/shared); the stageconfig testdata is a copy of a
// few upstream configs kept in the repository.
const (
	sharedDir      = "../../../shared"
	sharedConfigs  = sharedDir + "/testdata/vllm-omni"
	seedRecipePath = sharedDir + "/seed/000_8b3247545c660951.txt"
	localConfigs   = "../stageconfig/testdata"
)

// Local copies of upstream configs (see ../stageconfig/testdata/MANIFEST.tsv).
const (
	legacyQwen3         = "legacy_stage_configs__qwen3_omni_moe-be81443c.yaml"
	legacyQwen3Multi    = "legacy_stage_configs__qwen3_omni_moe_multiconnector-be81443c.yaml"
	legacyQwen3PD       = "legacy_stage_configs__qwen3_omni_moe_pd_separation-b9f6fd40.yaml"
	stagesQwen3         = "deploy__qwen3_omni_moe-e2aa6aad.yaml"
	stagesHunyuanPD     = "deploy__hunyuan_image_3_moe_pd-c9899cfe.yaml"
	stageArgsQwen3TTSPD = "deploy__qwen3_tts_pd_1p1d-f8a5c724.yaml"
	stagesCosmosDisagg  = "deploy__cosmos3_super_t2i_disagg-62e1dd83.yaml"
)

func ptr[T any](v T) *T { return &v }

// readLocal reads one of the upstream configs kept in the repository.
func readLocal(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(localConfigs, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// requireShared skips when the shared folder is missing (a bare clone).
func requireShared(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared file %s not found: %v", path, err)
	}
}

// mustPlan plans spec and fails the test, listing every diagnostic, when
// the plan has errors.
func mustPlan(t testing.TB, spec Spec) *Result {
	t.Helper()
	res, ds := Plan(spec)
	if ds.HasErrors() || res == nil {
		t.Fatalf("Plan failed:\n%s", describeDiags(ds))
	}
	return res
}

// laidOut runs the steps before placement on spec, without Plan: the base
// config read, the split chosen and the stages laid out. A problem on the
// way fails the test.
func laidOut(t *testing.T, spec Spec) (baseConfig, stageLayout) {
	t.Helper()
	var ds Diagnostics
	base, ok := readBase(spec, &ds)
	if !ok {
		t.Fatal(describeDiags(ds))
	}
	split, ok := chooseSplit(base.g, spec.SplitStage, &ds)
	if !ok {
		t.Fatal(describeDiags(ds))
	}
	return base, layout(spec, base.g, split)
}

func describeDiags(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

// config decodes a rendered config into plain values.
func config(t testing.TB, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatalf("the config does not decode: %v\n%s", err, src)
	}
	return m
}

// stageList returns the decoded stages of either dialect.
func stageList(t testing.TB, cfg map[string]any) []map[string]any {
	t.Helper()
	raw, ok := cfg["stage_args"].([]any)
	if !ok {
		raw, ok = cfg["stages"].([]any)
	}
	if !ok {
		t.Fatalf("no stage list in %v", cfg)
	}
	out := make([]map[string]any, len(raw))
	for i, s := range raw {
		out[i], ok = s.(map[string]any)
		if !ok {
			t.Fatalf("stage %d is %T", i, s)
		}
	}
	return out
}

// dig walks decoded YAML by map keys and list indices; it returns nil when
// the path does not exist.
func dig(v any, path ...any) any {
	for _, step := range path {
		switch k := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// has reports whether a map holds key, whatever its value.
func has(m map[string]any, key string) bool {
	_, ok := m[key]
	return ok
}

// hasCode reports whether ds holds a diagnostic with code at path.
func hasCode(ds Diagnostics, code, path string) bool {
	for _, d := range ds {
		if d.Code.String() == code && d.Path.String() == path {
			return true
		}
	}
	return false
}

// hasCodeAny reports whether ds holds a diagnostic with code, at any path.
func hasCodeAny(ds Diagnostics, code string) bool {
	for _, d := range ds {
		if d.Code.String() == code {
			return true
		}
	}
	return false
}

// yamlComments lists the text of every comment in a YAML document.
func yamlComments(t testing.TB, src string) []string {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		for _, c := range []string{n.HeadComment, n.LineComment} {
			if c != "" {
				out = append(out, c)
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
		if n.FootComment != "" {
			out = append(out, n.FootComment)
		}
	}
	walk(&n)
	return out
}

func codesOf(ds Diagnostics, code string) []Diagnostic {
	var out []Diagnostic
	for _, d := range ds {
		if d.Code.String() == code {
			out = append(out, d)
		}
	}
	return out
}

// digPath reads decoded YAML by a dotted path whose numeric parts are list
// indices: "stage_args.0.engine_args.kv_transfer_config.kv_role".
func digPath(v any, path string) any {
	var steps []any
	for _, part := range strings.Split(path, ".") {
		if n, err := strconv.Atoi(part); err == nil {
			steps = append(steps, n)
		} else {
			steps = append(steps, part)
		}
	}
	return dig(v, steps...)
}

// withLocalPaths replaces each word of argv that is one of the planned
// paths with where the test keeps that file. A plan names paths the units'
// sandbox lets them read; a test's own files live in its temporary
// directory, under /tmp, which the units' PrivateTmp=yes replaces with an
// empty one, so the test plans with the former and runs with the latter.
func withLocalPaths(argv []string, local map[string]string) []string {
	out := make([]string, len(argv))
	for i, w := range argv {
		if l, ok := local[w]; ok {
			w = l
		}
		out[i] = w
	}
	return out
}

// commandOf is a process's argv, shell-quoted.
func commandOf(p Process) string { return ShellJoin(p.Argv) }

// loadedUnit is what systemd loads for a process: the plan's one unit file
// and, for a stage's instance, its drop-in after it.
func loadedUnit(res *Result, p Process) string {
	if p.DropIn == nil {
		return res.SystemdUnit.Content
	}
	return res.SystemdUnit.Content + "\n# " + p.DropIn.Path + "\n" + p.DropIn.Content
}

// execArgv is what a process's unit runs, as systemd expands it, with vllm
// at s.VLLMPath where that is set, and the check script at a file of the
// test's (checkScriptFile).
func execArgv(proc Process, s ServiceSpec) []string {
	argv := withLocalPaths(proc.exec, map[string]string{DefaultCheckScriptPath: checkScriptFile()})
	if s.VLLMPath != "" {
		argv[slices.Index(argv, "--")+1] = s.VLLMPath
	}
	return argv
}

// preflightOf is a process's preflight as an operator runs it by hand: its
// unit's command up to the `--` before vllm.
func preflightOf(proc Process) []string {
	argv := execArgv(proc, ServiceSpec{})
	return argv[:slices.Index(argv, "--")]
}

// checkScriptDir holds checkScriptFile's file, removed when the tests end.
var checkScriptDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if checkScriptDir != "" {
		_ = os.RemoveAll(checkScriptDir)
	}
	os.Exit(code)
}

// checkScriptFile is CheckScript in a file, written once per test binary.
var checkScriptFile = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "pd-check-")
	if err != nil {
		panic(err)
	}
	checkScriptDir = dir
	path := filepath.Join(dir, "pd-check.py")
	if err := os.WriteFile(path, []byte(CheckScript), 0o644); err != nil {
		panic(err)
	}
	return path
})
