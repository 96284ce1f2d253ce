package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// The goldens pin whole plans byte for byte, across every step, so they stay
// here and not beside one step's file.

// goldenCase is one planned config pinned byte for byte. Any change to the
// engine's output shows up here as a diff to review; when the change is
// intended, rerun with -update and commit the new files.
type goldenCase struct {
	name string
	spec func(t *testing.T) Spec
}

func goldenCases() []goldenCase {
	cases := []goldenCase{
		// The product's promise: with only the model set, the seed recipe
		// as the default release (0.24.0) starts it: NIXL, one process per
		// stage.
		{"seed_qwen3_omni", func(*testing.T) Spec { return Spec{Model: seedModel} }},
		// A Qwen3-Omni model without audio output: the thinker alone, split
		// into prefill and decode, decode the final text output.
		{"qwen3_omni_thinking", func(*testing.T) Spec { return Spec{Model: thinkingModel} }},
		// Qwen2.5-Omni runs PD only where its processors exist: 0.22.0.
		{"qwen2_5_omni", func(*testing.T) Spec { return Spec{Model: "Qwen/Qwen2.5-Omni-7B"} }},
		{"tp2_both_sides", func(*testing.T) Spec {
			return Spec{Model: seedModel,
				Prefill: RoleSpec{TensorParallelSize: ptr(2)},
				Decode:  RoleSpec{TensorParallelSize: ptr(2)}}
		}},
		// MultiConnector passes the handoff gate through its NIXL child.
		{"multi_connector", func(*testing.T) Spec {
			return Spec{Model: seedModel, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{
				"connectors": []any{map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}}}
		}},
		// LMCache beside NIXL (alone it fails the handoff gate): its
		// peer ports on decode, its proxy's port on the head, its LMCACHE_*
		// roles in each side's environment.
		{"lmcache_child", func(*testing.T) Spec {
			return Spec{Model: seedModel, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{
				"connectors": []any{map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "LMCacheConnectorV1"}}}}}
		}},
		// A user's legacy config: its comments and spellings
		// (max_batch_size, worker_cls) must come through.
		{"legacy_base_config", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: readLocal(t, legacyQwen3)}
		}},
		// The current upstream dialect, split at stage 0, with platforms.
		{"stages_base_config", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: readLocal(t, stagesQwen3), SplitStage: ptr(0)}
		}},
		// No release registers a PD pipeline: the stages dialect runs on the
		// user's own registration, on a release they name.
		{"seed_as_stages_format", func(*testing.T) Spec {
			return Spec{Model: seedModel, Format: "stages", Pipeline: "qwen3_omni_moe_pd", VLLMOmniVersion: "0.28.0"}
		}},
		// A release that loads only the stages dialect: the thinker alone,
		// split, on the registration the plan writes, which every process
		// imports first. 0.27.0rc1 at its own commit (the later rows write
		// the same module); 0.26.0 from 0.26.0rc1's pipeline definition,
		// whose thinker's engine_output_type is "latent".
		{"thinking_registration_0.27.0rc1", func(*testing.T) Spec { return Spec{Model: thinkingModel, VLLMOmniVersion: "0.27.0rc1"} }},
		{"thinking_registration_0.26.0", func(*testing.T) Spec { return Spec{Model: thinkingModel, VLLMOmniVersion: "0.26.0"} }},
		// Two hosts: the stage-based launch and a connector on the edge
		// between them.
		{"multi_host", func(*testing.T) Spec {
			return Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
		}},
		// Two talker replicas, started by the talker's own process
		// (--omni-dp-size-local 2) on the talker's own devices.
		{"talker_replicas", func(*testing.T) Spec {
			return Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(2)}}}
		}},
		// Three hosts, spelled the long way (canonical in the output), with
		// the units' settings given.
		{"multi_host_rdma", func(*testing.T) Spec {
			return Spec{Model: seedModel, Prefill: RoleSpec{Host: "::ffff:10.0.0.1"}, Decode: RoleSpec{Host: "::ffff:a00:2"},
				StageOverrides: map[string]StageOverride{"code2wav": {Host: "10.0.0.3"}},
				Service: ServiceSpec{User: "omni", CacheDir: "/srv/hf", VLLMPath: "/opt/vllm/bin/vllm", EnvironmentFile: "/etc/omni/secrets.env",
					UnitPrefix: "qwen-pd", HeadWaitSeconds: ptr(120)}}
		}},
		// A privileged API port: the head's unit, and it alone, may bind
		// it (CAP_NET_BIND_SERVICE and nothing else).
		{"privileged_api_port", func(*testing.T) Spec { return Spec{Model: seedModel, APIPort: ptr(80)} }},
		// Across hosts, with the ports drawn from around 1024: each unit
		// gets the capability exactly when a port it listens on is below.
		{"privileged_ports_multi_host", func(*testing.T) Spec {
			return Spec{Model: seedModel, APIPort: ptr(443), PortRange: &PortRange{First: 1022, Last: 1100},
				Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
		}},
	}
	// The default model on every release that runs its PD natively, each
	// as that release starts it (seed_qwen3_omni is the default, 0.24.0).
	for _, v := range pdNativeQwen3Releases {
		if v == qwen3DefaultRelease {
			continue
		}
		cases = append(cases, goldenCase{"seed_" + v, func(*testing.T) Spec { return Spec{Model: seedModel, VLLMOmniVersion: v} }})
	}
	return cases
}

// pdNativeQwen3Releases are the releases on which the default Qwen3-Omni
// plan runs PD natively (releases_test holds the table to the same list).
var pdNativeQwen3Releases = []string{"0.20.0", "0.21.0rc1", "0.22.0", "0.23.0rc1", "0.24.0"}

const qwen3DefaultRelease = "0.24.0"

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc) })
	}
}

// checkGolden compares one case's plan with its golden files: the config,
// the launch and every unit file.
func checkGolden(t *testing.T, tc goldenCase) {
	t.Helper()
	res := mustPlan(t, tc.spec(t))
	compareGolden(t, filepath.Join("testdata", "golden", tc.name+".yaml"), res.ConfigYAML)
	compareGolden(t, filepath.Join("testdata", "golden", tc.name+".launch.json"), launchGolden(t, res))
	if reg := res.Registration; reg != nil && reg.Content != "" {
		compareGolden(t, filepath.Join("testdata", "golden", tc.name+".registration.py"), reg.Content)
	}
	units := filepath.Join("testdata", "golden", tc.name+".units")
	compareGolden(t, filepath.Join(units, filepath.Base(res.SystemdUnit.Path)), res.SystemdUnit.Content)
	for _, l := range res.Launches {
		for _, proc := range l.Processes {
			if proc.DropIn != nil {
				compareGolden(t, filepath.Join(units, tcUnitPath(l.Host, proc.UnitName+".d"), "plan.conf"), proc.DropIn.Content)
			}
		}
	}
}

// launchGolden renders what the machines run, next to the config: the
// release, serve_command and serve_args, and every launch with its
// processes. The units are golden files of their own, readable as units.
func launchGolden(t *testing.T, res *Result) string {
	t.Helper()
	launches := make([]Launch, len(res.Launches))
	for i, l := range res.Launches {
		l.Processes = append([]Process(nil), l.Processes...)
		for j := range l.Processes {
			if proc := &l.Processes[j]; proc.DropIn != nil {
				proc.DropIn = &UnitFile{Path: proc.DropIn.Path, Content: "(" + tcUnitPath(l.Host, proc.UnitName+".d") + "/plan.conf)"}
			}
		}
		launches[i] = l
	}
	b, err := json.MarshalIndent(struct {
		Release      string
		ServeCommand string
		ServeArgs    []string
		SystemdUnit  string
		CheckScript  string
		Launches     []Launch
		Ports        []Port
		GPUCount     int
		ConfigSHA256 string
		Health       Health
	}{res.Release, res.ServeCommand, res.ServeArgs, res.SystemdUnit.Path, res.CheckScriptPath, launches, res.Ports, res.GPUCount, res.ConfigSHA256, res.Health}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// tcUnitPath is where a unit's golden file lives: a folder per host, with
// an IPv6 address's colons spelled as '_' so that every checkout can hold it.
func tcUnitPath(host, unit string) string {
	return filepath.Join(strings.ReplaceAll(host, ":", "_"), unit)
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if the change is intended):\n%s", path, lineDiff(string(want), got))
	}
}

// TestGoldenUserCommentsSurvive checks every comment of a user's base
// config is in the planned config: the provider must not drop what a user
// wrote.
func TestGoldenUserCommentsSurvive(t *testing.T) {
	for _, name := range []string{legacyQwen3, legacyQwen3Multi, stagesQwen3} {
		t.Run(name, func(t *testing.T) {
			base := readLocal(t, name)
			spec := Spec{Model: seedModel, BaseConfig: base}
			if strings.HasPrefix(name, "deploy__") {
				spec.SplitStage = ptr(0)
			}
			res := mustPlan(t, spec)
			comments := yamlComments(t, base)
			if len(comments) == 0 {
				t.Fatal("the base has no comments to check")
			}
			for _, c := range comments {
				for _, line := range strings.Split(c, "\n") {
					if !strings.Contains(res.ConfigYAML, strings.TrimSpace(line)) {
						t.Errorf("comment line %q is missing from the planned config", line)
					}
				}
			}
		})
	}
}

// lineDiff shows the first differing lines with a little context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			var out strings.Builder
			for j := max(0, i-3); j < i; j++ {
				out.WriteString("    " + w[j] + "\n")
			}
			out.WriteString("  - " + a + "\n  + " + b + "\n")
			out.WriteString("  (line " + strconv.Itoa(i+1) + ")")
			return out.String()
		}
	}
	return "(no line differs; check trailing bytes)"
}

// Every release on which the default plan runs gets a golden file: a row
// that starts or stops running it changes this list.
func TestGoldenCoversEveryPDNativeRelease(t *testing.T) {
	var native []string
	for _, r := range releases.Table {
		if _, ds := Plan(Spec{Model: seedModel, VLLMOmniVersion: r.Version}); !ds.HasErrors() {
			native = append(native, r.Version)
		}
	}
	if !slices.Equal(native, pdNativeQwen3Releases) {
		t.Errorf("the default plan runs on %v; pdNativeQwen3Releases lists %v", native, pdNativeQwen3Releases)
	}
}
