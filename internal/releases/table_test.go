package releases

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// rowFacts is what each release row must say, one line per release: adding
// a release to the table means adding its line here.
var rowFacts = []struct {
	version            string
	stageArgs, stages  bool // loaders
	refuses            bool // the deploy loader refuses stage_args
	replicaFlags, p2p  bool
	nativeQwen3Default bool   // runs the default Qwen3-Omni plan natively
	commit             string // where its code was read, "" when not
	stageEnv           bool   // applies per-stage runtime.env in one process
	qwen3Processors    bool   // has qwen3_omni.thinker2talker
	qwen25Processors   bool   // has qwen2_5_omni.thinker2talker
	requiredKeys       int    // stage keys read with no default
}{
	{"0.20.0", true, true, false, false, true, true, "7f2b1e93", false, true, true, 0},
	{"0.21.0rc1", true, true, false, false, true, true, "eb4e60ee", false, true, true, 0},
	{"0.22.0", true, true, false, true, true, true, "f92d84fc", true, true, true, 0},
	{"0.23.0rc1", true, true, false, true, false, true, "7b837944", true, true, true, 0},
	{"0.24.0", true, true, false, true, false, true, "d4a869fe", false, true, false, 0},
	{"0.25.0rc1", true, true, false, true, false, false, "d3c47efc", false, false, false, 0},
	{"0.26.0rc1", true, true, false, true, false, false, "cbab1d4d", false, false, false, 5},
	{"0.26.0", false, true, false, true, false, false, "", false, false, false, 5},
	{"0.27.0rc1", false, true, false, true, false, false, "2ce15ab7", false, false, false, 4},
	{"0.27.0", false, true, false, true, false, false, "", false, false, false, 4},
	{"0.28.0", false, true, true, true, false, false, "", false, false, false, 4},
	{"0.29.0rc1", false, true, true, true, false, false, "", false, false, false, 4},
	{"0.30.0", false, true, true, true, false, false, "", false, false, false, 4},
	{"0.31.0rc1", false, true, true, true, false, false, "", false, false, false, 4},
	{"0.32.0", false, true, true, true, false, false, "", false, false, false, 4},
}

// The recipe's processors, as the Qwen3-Omni preset names them.
var recipeProcessors = []ProcessorRef{
	{Key: "sync_process_input_func", Value: qwen3Processors + ".thinker2talker_token_only"},
	{Key: "sync_process_input_func", Value: qwen3Processors + ".talker2code2wav_token_only"},
}

// anyPlan is a plan whose processors nothing judges: it tests how versions
// resolve. qwen3Default is the default Qwen3-Omni plan.
var (
	anyPlan      = Need{BaseDialect: StageArgs, BasePipeline: "qwen3_omni_moe", Connectors: []string{"NixlConnector"}}
	qwen3Default = Need{BaseDialect: StageArgs, BasePipeline: "qwen3_omni_moe", Connectors: []string{"NixlConnector"}, Processors: recipeProcessors}
)

func TestTable_Rows(t *testing.T) {
	if len(Table) != len(rowFacts) {
		t.Fatalf("%d rows, %d lines of facts: add the new release to rowFacts", len(Table), len(rowFacts))
	}
	for i, want := range rowFacts {
		r := Table[i]
		if r.Version != want.version {
			t.Fatalf("row %d is %s, want %s", i, r.Version, want.version)
		}
		_, q3 := r.Processors.Lookup(qwen3Processors + ".thinker2talker")
		_, q25 := r.Processors.Lookup(qwen25Processors + ".thinker2talker")
		got := []bool{r.Reads(StageArgs), r.Reads(Stages), r.Deploy != nil && r.Deploy.RefusesStageArgs,
			r.StageCLI.Has(FlagOmniReplicaAddr), r.KVConnectors.Has("P2pNcclConnector"), r.StageEnv.Applied, q3, q25}
		exp := []bool{want.stageArgs, want.stages, want.refuses, want.replicaFlags, want.p2p, want.stageEnv, want.qwen3Processors, want.qwen25Processors}
		for j, name := range []string{"stage_args loader", "stages loader", "refuses stage_args", "replica flags", "P2pNcclConnector", "runtime.env applied", "qwen3_omni.thinker2talker", "qwen2_5_omni.thinker2talker"} {
			if got[j] != exp[j] {
				t.Errorf("%s: %s = %v, want %v", r.Version, name, got[j], exp[j])
			}
		}
		if r.Commit != want.commit {
			t.Errorf("%s: read at %q, want %q", r.Version, r.Commit, want.commit)
		}
		if n := len(r.RequiredStageKeys.Names); n != want.requiredKeys {
			t.Errorf("%s: %d stage keys without a default, want %d", r.Version, n, want.requiredKeys)
		}
		if c, why := qwen3Default.evaluate(r); (len(why) == 0 && c.Native()) != want.nativeQwen3Default {
			t.Errorf("%s: runs the default plan natively = %v (%v), want %v", r.Version, len(why) == 0, why, want.nativeQwen3Default)
		}
	}
}

// The handoff gate holds on every release, and only NIXL passes it, alone
// or as a MultiConnector child.
func TestTable_HandoffGate(t *testing.T) {
	for _, r := range Table {
		g := r.Handoff
		if !g.Required || g.Source == "" || g.Passing.Source == "" {
			t.Errorf("%s: the gate is not described: %+v", r.Version, g)
		}
		for name, passes := range map[string]bool{"NixlConnector": true, "MooncakeConnector": false, "P2pNcclConnector": false, "LMCacheConnectorV1": false} {
			if g.Passes(name, nil) != passes {
				t.Errorf("%s: %s passes = %v", r.Version, name, !passes)
			}
		}
		if !g.Passes(MultiConnector, []string{"MooncakeConnector", "NixlConnector"}) || g.Passes(MultiConnector, []string{"MooncakeConnector"}) {
			t.Errorf("%s: MultiConnector passes only with a NIXL child", r.Version)
		}
	}
	if (HandoffGate{}).Passes("MooncakeConnector", nil) != true {
		t.Error("a release without the gate lets every connector through")
	}
}

// Rows without a commit say why, and what they carry.
func TestTable_UnreadRowsSaySo(t *testing.T) {
	for _, r := range Table {
		if (r.Commit == "") == (r.Unread == "") {
			t.Errorf("%s: a row names its commit or says why it cannot (commit %q, unread %q)", r.Version, r.Commit, r.Unread)
		}
		if r.Commit != "" && !strings.Contains(r.Handoff.Source, r.Commit) {
			t.Errorf("%s: the gate was read at %s, not the row's commit %s", r.Version, r.Handoff.Source, r.Commit)
		}
		for _, src := range []string{r.Source, r.Handoff.Source, r.StageEnv.Source, r.Processors.Source, r.StageCLI.Source, r.Validator.Source} {
			if strings.Contains(src, "3ba7024e") || strings.Contains(src, "mooncake_pd_patch") {
				t.Errorf("%s cites an open pull request's branch: %s", r.Version, src)
			}
		}
	}
}

var date = regexp.MustCompile(`^2026-\d\d-\d\d$`)

// TestTable_WellFormed holds every row to the table's own rules.
func TestTable_WellFormed(t *testing.T) {
	for i, r := range Table {
		v, err := ParseVersion(r.Version)
		if err != nil || !v.HasPatch {
			t.Errorf("row %d: version %q is not an exact release", i, r.Version)
			continue
		}
		if i > 0 && Table[i-1].V().Compare(v) >= 0 {
			t.Errorf("%s is not newer than %s: keep the table oldest first", r.Version, Table[i-1].Version)
		}
		if r.VLLM != v.Line() {
			t.Errorf("%s needs vLLM %s; vllm-omni x.y needs vLLM x.y", r.Version, r.VLLM)
		}
		if r.Date != "" && !date.MatchString(r.Date) {
			t.Errorf("%s: date %q is not YYYY-MM-DD", r.Version, r.Date)
		}
		if r.Source == "" || r.Validator.Source == "" || r.StageCLI.Source == "" || r.KVConnectors.Source == "" {
			t.Errorf("%s: a fact has no source", r.Version)
		}
		if (r.StageArgs != nil) != r.Reads(StageArgs) {
			t.Errorf("%s: the stage_args runtime is described iff the dialect is loaded", r.Version)
		}
		if r.Reads(Stages) && r.Deploy == nil {
			t.Errorf("%s: loads stages but describes no deploy loader", r.Version)
		}
		for _, l := range r.Loaders {
			want := map[string]string{StageArgs: FlagStageConfigsPath, Stages: FlagDeployConfig}[l.Dialect]
			if l.Flag != want || l.Source == "" {
				t.Errorf("%s: %s is read through %s (source %q)", r.Version, l.Dialect, l.Flag, l.Source)
			}
		}
		if !r.Validator.Has(CheckEqualTP) {
			t.Errorf("%s: every release's PD validator demands equal tensor_parallel_size", r.Version)
		}
		if !r.StageBased() {
			t.Errorf("%s has no stage-based launch", r.Version)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, s := range []string{"0.24", "0.24.0", "0.27.0rc1", "1.0", "0.100.3"} {
		v, err := ParseVersion(s)
		if err != nil || v.String() != s {
			t.Errorf("%q: %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"", "v0.24", "0.24.", "0.24.0.post1", "0.24rc1", "0.024", "0.24.0-rc1", "0.24.0rc0", " 0.24", "0.24\n"} {
		if _, err := ParseVersion(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	if MustVersion("0.27.0rc1").Compare(MustVersion("0.27.0")) >= 0 || MustVersion("0.27.0rc2").Compare(MustVersion("0.27.0rc1")) <= 0 {
		t.Error("release candidates must sort before their release, and by number")
	}
}

func TestChoose(t *testing.T) {
	multi := qwen3Default
	multi.MultiHost = true
	p2p := qwen3Default
	p2p.Connectors = []string{"P2pNcclConnector"}
	qwen25 := Need{BaseDialect: StageArgs, BasePipeline: "qwen2_5_omni", Connectors: []string{"NixlConnector"},
		Processors: []ProcessorRef{{Key: "custom_process_input_func", Value: qwen25Processors + ".thinker2talker"}}}
	stages := qwen3Default
	stages.Dialect = Stages
	userPipeline := stages
	userPipeline.Pipeline = "my_pd"
	nextLine, nextPatch := Beyond()
	tests := []struct {
		name, version string
		need          Need
		release       string // "" when an error is expected
		dialect       string
		code          string
	}{
		{"default: newest final release that runs PD", "", qwen3Default, "0.24.0", StageArgs, ""},
		{"a line takes its newest final release", "0.22", qwen3Default, "0.22.0", StageArgs, ""},
		{"a line with only a candidate takes it", "0.25", anyPlan, "0.25.0rc1", StageArgs, ""},
		{"an exact candidate", "0.26.0rc1", anyPlan, "0.26.0rc1", StageArgs, ""},
		{"Qwen3-Omni's processors are gone", "0.25.0rc1", qwen3Default, "", "", "release_no_pd"},
		{"0.26.0 has no stage_args path", "0.26.0", anyPlan, "", "", "release_no_pd"},
		{"0.26 means 0.26.0", "0.26", anyPlan, "", "", "release_no_pd"},
		{"stages dialect: nothing registered", "0.28.0", stages, "", "", "release_no_pd"},
		{"stages dialect: the user's registration", "0.28.0", userPipeline, "0.28.0", Stages, ""},
		{"the user's registration: the newest final release that loads it", "", userPipeline, NewestFinal().Version, Stages, ""},
		{"P2pNccl: the newest release that loads it", "", p2p, "0.22.0", StageArgs, ""},
		{"P2pNccl where vLLM lost it", "0.24.0", p2p, "", "", "release_no_pd"},
		{"multi-host", "", multi, "0.24.0", StageArgs, ""},
		{"malformed", "latest", qwen3Default, "", "", "release_malformed"},
		{"Qwen2.5-Omni: the newest final release with its processors", "", qwen25, "0.22.0", StageArgs, ""},
		{"Qwen2.5-Omni's processors are gone", "0.24.0", qwen25, "", "", "release_no_pd"},
		{"before PD", "0.18.0", qwen3Default, "", "", "release_before_pd"},
		{"0.19.0rc1 does not run PD", "0.19.0rc1", qwen3Default, "", "", "release_before_pd"},
		{"newer than the table", nextLine, qwen3Default, "", "", "release_unknown_newer"},
		{"newer patch than the table", nextPatch, qwen3Default, "", "", "release_unknown_newer"},
		{"inside the table but not a release", "0.24.1", qwen3Default, "", "", "release_unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, p := Choose(tc.version, tc.need)
			switch {
			case tc.release == "" && p == nil:
				t.Fatalf("chose %s, want %s", c.Release.Version, tc.code)
			case tc.release == "" && p.Code.String() != tc.code:
				t.Fatalf("%s: %s, want %s", p.Code, p.Detail, tc.code)
			case tc.release != "" && p != nil:
				t.Fatalf("%s: %s", p.Code, p.Detail)
			case tc.release != "" && (c.Release.Version != tc.release || c.Dialect != tc.dialect):
				t.Fatalf("chose %s in %s, want %s in %s", c.Release.Version, c.Dialect, tc.release, tc.dialect)
			}
			if p != nil && p.Code.String() != "release_none" && p.Code.String() != "release_malformed" && !strings.Contains(p.Detail, "a release that runs this plan") && !strings.Contains(p.Detail, "No release") {
				t.Errorf("the error does not list the releases that would work: %s", p.Detail)
			}
		})
	}
}

// The recipe's processors become the ones the stage_args runtime calls;
// a value outside vllm-omni's processors moves as it is.
func TestIgnoredKeyValue(t *testing.T) {
	sync := stageArgsRuntime.Ignored[0]
	for in, want := range map[string]string{
		"vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker_token_only": "vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker",
		"my_pkg.processors.thinker2talker_token_only":                                          "my_pkg.processors.thinker2talker_token_only",
	} {
		if got := sync.Value(in); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
	if batch := stageArgsRuntime.Ignored[1]; batch.Value("16") != "16" {
		t.Error("max_batch_size's value changed on the way")
	}
}

// A connector no release's vLLM loads is named as the reason, not blamed
// on the stages dialect.
func TestChoose_UnloadableConnectorNamed(t *testing.T) {
	need := qwen3Default
	need.Connectors = []string{"NoSuchConnector"}
	_, p := Choose("", need)
	if p == nil {
		t.Fatal("chose a release for a connector no release loads")
	}
	if !strings.Contains(p.Detail, "loads the KV connector NoSuchConnector") || strings.Contains(p.Detail, "stages dialect") {
		t.Errorf("%s: %s, want the connector named and no word of the stages dialect", p.Code, p.Detail)
	}
}

// Each row's connectors follow from the entries: P2pNccl until vLLM 0.23.
func TestTable_KVConnectorsFromEntries(t *testing.T) {
	for _, r := range Table {
		want := MustVersion(r.VLLM).Compare(MustVersion("0.23")) < 0
		if got := r.KVConnectors.Has("P2pNcclConnector"); got != want {
			t.Errorf("%s (vLLM %s) loads P2pNcclConnector: %v, want %v", r.Version, r.VLLM, got, want)
		}
		if !r.KVConnectors.Has("NixlConnector") || !r.KVConnectors.Has(MultiConnector) {
			t.Errorf("%s: %v lacks NixlConnector or MultiConnector", r.Version, r.KVConnectors.Names)
		}
	}
}

// The registry facts: a registry from 0.24.0 (#3760), a registration the
// plan writes on the releases that load only the stages dialect, a
// processor that merges PD embeddings to 0.24.0, and, for a row read at its
// own commit, registry facts read at that commit.
func TestTable_Registry(t *testing.T) {
	for _, r := range Table {
		v := r.V()
		registry := v.Compare(MustVersion("0.24.0")) >= 0
		if (r.Registry != nil) != registry {
			t.Errorf("%s: has a registry = %v, want %v", r.Version, r.Registry != nil, registry)
		}
		if r.WritesRegistration() != (registry && !r.Reads(StageArgs)) {
			t.Errorf("%s: writes a registration = %v", r.Version, r.WritesRegistration())
		}
		if merges := v.Compare(MustVersion("0.25.0rc1")) < 0; r.MergesPDEmbeddings() != merges || r.MergedPDEmbeddings.Source == "" {
			t.Errorf("%s: merges PD embeddings = %v, want %v (%s)", r.Version, r.MergesPDEmbeddings(), merges, r.MergedPDEmbeddings.Source)
		}
		if r.Registry == nil {
			continue
		}
		if r.Commit != "" && (!strings.Contains(r.Registry.Source, r.Commit) || !strings.Contains(r.MergedPDEmbeddings.Source, r.Commit)) {
			t.Errorf("%s: registry facts not read at the row's commit %s: %s", r.Version, r.Commit, r.Registry.Source)
		}
		def, ok := r.Registry.Definition("qwen3_omni_moe_thinker_only")
		thinker, _ := def.Stage("thinker")
		wantOutput := "text"
		if v.Compare(MustVersion("0.27.0rc1")) < 0 {
			wantOutput = "latent"
		}
		if !ok || thinker.EngineOutputType != wantOutput || thinker.ExecutionType != "LLM_AR" || !thinker.SamplingConstraints["detokenize"] {
			t.Errorf("%s: the thinker-only definition %+v, want engine_output_type %s", r.Version, def, wantOutput)
		}
		if r.Registry.PDFlags != "extras" || !slices.Contains(r.Registry.StageFields, "extras") {
			t.Errorf("%s: the PD flags travel in %q", r.Version, r.Registry.PDFlags)
		}
	}
}
