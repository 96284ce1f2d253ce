package pipeline

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A stage's num_replicas reaches the process that runs it. In a
// stage-based launch each process starts as many replicas of its own stage
// as --omni-dp-size-local says, 1 unless given, whatever the config says:
// the head writes it over its own stage's num_replicas
// (_validate_single_stage_mode_replica_constraints,
// vllm_omni/engine/async_omni_engine.py@f92d84fc :475-505), and a headless
// process launches that many (run_headless, entrypoints/cli/serve.py@f92d84fc
// :685-727), while the head expects the config's count of every other
// stage. So each process of a stage with num_replicas N > 1 gets
// --omni-dp-size-local N; a whole-pipeline process reads num_replicas from
// the config and gets no flag.
func TestStageReplicas_DPSizeLocal(t *testing.T) {
	acrossHosts := func(s Spec) Spec {
		s.Prefill.Host, s.Decode.Host = "10.0.0.1", "10.0.0.2"
		return s
	}
	talker := func(n int, host string) map[string]StageOverride {
		return map[string]StageOverride{"talker": {NumReplicas: ptr(n), Host: host}}
	}
	tests := []struct {
		name string
		spec Spec
		want map[int]int // stage id: --omni-dp-size-local; absent: no flag
	}{
		{"one host, the default release", Spec{StageOverrides: talker(2, "")}, map[int]int{2: 2}},
		{"one host, the 0.24 line", Spec{VLLMOmniVersion: "0.24", StageOverrides: talker(3, "")}, map[int]int{2: 3}},
		{"across hosts, on the talker's own host", acrossHosts(Spec{StageOverrides: talker(2, "10.0.0.3")}), map[int]int{2: 2}},
		{"across hosts on 0.22.0", acrossHosts(Spec{VLLMOmniVersion: "0.22.0", StageOverrides: talker(2, "")}), map[int]int{2: 2}},
		{"one replica: no flag", Spec{StageOverrides: talker(1, "")}, map[int]int{}},
		{"code2wav's replicas from the base config", Spec{BaseConfig: strings.Replace(readLocal(t, legacyQwen3),
			"  - stage_id: 2\n", "  - stage_id: 2\n    num_replicas: 2\n", 1)}, map[int]int{3: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Model = seedModel
			res, ds := Plan(spec)
			if res == nil {
				t.Fatal(describeDiags(ds))
			}
			seen := 0
			for _, l := range res.Launches {
				for _, proc := range l.Processes {
					if proc.StageID == nil {
						t.Fatal("a whole-pipeline process in a stage-based case")
					}
					seen++
					want, flagged := tc.want[*proc.StageID]
					i := slices.Index(proc.Argv, "--omni-dp-size-local")
					switch {
					case flagged && (i < 0 || proc.Argv[i+1] != strconv.Itoa(want)):
						t.Errorf("stage %d: argv %q, want --omni-dp-size-local %d", *proc.StageID, proc.Argv, want)
					case !flagged && i >= 0:
						t.Errorf("stage %d: argv %q has --omni-dp-size-local", *proc.StageID, proc.Argv)
					}
				}
			}
			if seen < 4 {
				t.Errorf("%d processes", seen)
			}
		})
	}
	// One process for every stage: the config says it, no flag.
	res := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: "0.22.0", StageOverrides: talker(2, "")})
	if argv := res.Launches[0].Processes[0].Argv; slices.Contains(argv, "--omni-dp-size-local") || !strings.Contains(res.ConfigYAML, "num_replicas: 2") {
		t.Errorf("whole pipeline: argv %q, config has num_replicas 2: %v", argv, strings.Contains(res.ConfigYAML, "num_replicas: 2"))
	}
}

// Where the release cannot run a stage's replicas in the launch the plan
// makes, num_replicas > 1 is refused at the attribute that set it: 0.20.0
// has no num_replicas at all (vllm_omni@7f2b1e93 reads it nowhere), and
// 0.21.0rc1's stage-based launch refuses it for an LLM stage
// (async_omni_engine.py@eb4e60ee :445-469) and has no --omni-dp-size-local;
// both run every plan stage by stage.
func TestStageReplicas_Unsupported(t *testing.T) {
	base := strings.Replace(readLocal(t, legacyQwen3), "  - stage_id: 2\n", "  - stage_id: 2\n    num_replicas: 2\n", 1)
	for _, tc := range []struct {
		name string
		spec Spec
		path string
	}{
		{"0.20.0, an override", Spec{VLLMOmniVersion: "0.20.0", StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(2)}}}, "stage_overrides.talker.num_replicas"},
		{"0.21.0rc1, an override", Spec{VLLMOmniVersion: "0.21.0rc1", StageOverrides: map[string]StageOverride{"code2wav": {NumReplicas: ptr(3)}}}, "stage_overrides.code2wav.num_replicas"},
		{"0.21.0rc1 across hosts", Spec{VLLMOmniVersion: "0.21.0rc1", Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"},
			StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(2)}}}, "stage_overrides.talker.num_replicas"},
		{"0.21.0rc1, the base config", Spec{VLLMOmniVersion: "0.21.0rc1", BaseConfig: base}, "base_config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Model = seedModel
			_, ds := Plan(spec)
			got := codesOf(ds, "num_replicas_unsupported")
			if len(got) != 1 || got[0].Path.String() != tc.path || got[0].Severity != SeverityError ||
				!strings.Contains(got[0].Detail, "vllm-omni "+spec.VLLMOmniVersion) || !strings.Contains(got[0].Detail, "0.22.0") {
				t.Errorf("want one num_replicas_unsupported at %s naming the release and 0.22.0:\n%s", tc.path, describeDiags(ds))
			}
		})
	}
	// One replica is what every release runs.
	if _, ds := Plan(Spec{Model: seedModel, VLLMOmniVersion: "0.21.0rc1", StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(1)}}}); ds.HasErrors() {
		t.Errorf("num_replicas 1 on 0.21.0rc1: %s", describeDiags(ds))
	}
}
