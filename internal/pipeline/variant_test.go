package pipeline

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

const (
	thinkingModel  = "Qwen/Qwen3-Omni-30B-A3B-Thinking"
	captionerModel = "Qwen/Qwen3-Omni-30B-A3B-Captioner"
)

// inferPreset and checkVariant refuse a model id whose pipeline the plan
// cannot know, and a preset that runs stages the model does not have.
func TestPresetChoiceDiagnostics(t *testing.T) {
	unknown := func(model string) func(*testing.T) Spec {
		return func(*testing.T) Spec { return Spec{Model: model} }
	}
	runPlanDiagnostics(t, []planDiagCase{
		{"a Qwen3-Omni id that names no model", unknown("Qwen/Qwen3-Omni"), "preset_variant_unknown", "model"},
		{"a Qwen3-Omni id without its variant", unknown("Qwen/Qwen3-Omni-30B-A3B"), "preset_variant_unknown", "model"},
		{"a quantized copy of a Qwen3-Omni model", unknown("cpatonn/Qwen3-Omni-30B-A3B-Instruct-AWQ-4bit"), "preset_variant_unknown", "model"},
		{"a published name under another org", unknown("acme/Qwen3-Omni-30B-A3B-Thinking"), "preset_variant_unknown", "model"},
		{"a local path named after the family", unknown("/models/qwen3_omni_moe"), "preset_variant_unknown", "model"},
		{"a Qwen2.5-Omni id no preset knows", unknown("Qwen/Qwen2.5-Omni-7B-GPTQ-Int4"), "preset_variant_unknown", "model"},
		{"a model of no known family", unknown("Qwen/Qwen3-8B"), "preset_not_inferred", "model"},
		{"the Thinking model with the talker pipeline", func(*testing.T) Spec {
			return Spec{Model: thinkingModel, Preset: "qwen3_omni_moe"}
		}, "preset_variant_mismatch", "preset"},
		{"the Captioner model with the talker pipeline", func(*testing.T) Spec {
			return Spec{Model: captionerModel, Preset: "qwen3_omni_moe"}
		}, "preset_variant_mismatch", "preset"},
		{"a Qwen3-Omni id no preset knows with Qwen2.5-Omni's preset", func(*testing.T) Spec {
			return Spec{Model: "Qwen/Qwen3-Omni", Preset: "qwen2_5_omni"}
		}, "model_arch_mismatch", "preset"},
	})
}

// The errors name what the user needs to decide: the known models, the
// presets with their pipelines, and how to tell which one a model has.
func TestPresetChoiceDetails(t *testing.T) {
	tests := []struct {
		spec Spec
		code string
		want []string
	}{
		{Spec{Model: "Qwen/Qwen3-Omni"}, "preset_variant_unknown", []string{
			`looks like a Qwen3-Omni model`,
			`Qwen/Qwen3-Omni-30B-A3B-Instruct (qwen3_omni_moe), Qwen/Qwen3-Omni-30B-A3B-Thinking (qwen3_omni_moe_thinker_only), Qwen/Qwen3-Omni-30B-A3B-Captioner (qwen3_omni_moe_thinker_only)`,
			`Set preset to the pipeline this model has: "qwen3_omni_moe" (thinker, talker, code2wav; text and audio output) or "qwen3_omni_moe_thinker_only" (thinker only; text output)`,
			`enable_audio_output is false`,
		}},
		{Spec{Model: "/models/qwen3_omni_moe"}, "preset_variant_unknown", []string{
			`A local path is matched by its last element, as in /models/Qwen3-Omni-30B-A3B-Instruct.`,
		}},
		{Spec{Model: "acme/Qwen2.5-Omni-7B-AWQ"}, "preset_variant_unknown", []string{
			`Qwen/Qwen2.5-Omni-7B (qwen2_5_omni), Qwen/Qwen2.5-Omni-3B (qwen2_5_omni)`,
			`Set preset to the pipeline this model has: "qwen2_5_omni" (thinker, talker, code2wav; text and audio output).`,
		}},
		{Spec{Model: thinkingModel, Preset: "qwen3_omni_moe"}, "preset_variant_mismatch", []string{
			`published with the pipeline of preset "qwen3_omni_moe_thinker_only", thinker only; text output (its model card`,
			`also runs talker and code2wav`,
			`Set preset = "qwen3_omni_moe_thinker_only"`,
		}},
		{Spec{Model: "Qwen/Qwen3-Omni", Preset: "qwen2_5_omni"}, "model_arch_mismatch", []string{
			`its id names Qwen3-Omni`,
			`"qwen3_omni_moe" (thinker, talker, code2wav; text and audio output) or "qwen3_omni_moe_thinker_only"`,
		}},
	}
	for _, tc := range tests {
		_, ds := Plan(tc.spec)
		got := codesOf(ds, tc.code)
		if len(got) != 1 {
			t.Errorf("model %q, preset %q: want one %s, got:\n%s", tc.spec.Model, tc.spec.Preset, tc.code, describeDiags(ds))
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got[0].Detail, w) {
				t.Errorf("model %q, preset %q: the detail lacks %q:\n%s", tc.spec.Model, tc.spec.Preset, w, got[0].Detail)
			}
		}
	}
}

// Which preset a plan uses, and that the choice from model is exact: each
// published model, an absolute local path to one, and the user's own
// choice where the model allows it.
func TestPresetChosen(t *testing.T) {
	tests := []struct {
		spec   Spec
		preset string
		stages int
	}{
		{Spec{Model: seedModel}, "qwen3_omni_moe", 4},
		{Spec{Model: thinkingModel}, "qwen3_omni_moe_thinker_only", 2},
		{Spec{Model: captionerModel}, "qwen3_omni_moe_thinker_only", 2},
		{Spec{Model: "qwen/qwen3-omni-30b-a3b-thinking"}, "qwen3_omni_moe_thinker_only", 2},
		{Spec{Model: "/models/Qwen3-Omni-30B-A3B-Thinking"}, "qwen3_omni_moe_thinker_only", 2},
		{Spec{Model: "/models/Qwen3-Omni-30B-A3B-Instruct"}, "qwen3_omni_moe", 4},
		{Spec{Model: "Qwen/Qwen2.5-Omni-3B"}, "qwen2_5_omni", 4},
		// Text only from the Instruct model: fewer stages than it has.
		{Spec{Model: seedModel, Preset: "qwen3_omni_moe_thinker_only"}, "qwen3_omni_moe_thinker_only", 2},
		// An id no preset knows, with the preset the user says it has.
		{Spec{Model: "Qwen/Qwen3-Omni", Preset: "qwen3_omni_moe_thinker_only"}, "qwen3_omni_moe_thinker_only", 2},
		// A local path is not judged: it may hold any weights.
		{Spec{Model: "/models/Qwen3-Omni-30B-A3B-Thinking", Preset: "qwen3_omni_moe"}, "qwen3_omni_moe", 4},
		{Spec{Model: seedModel, BaseConfig: miniBase}, "", 4},
	}
	for _, tc := range tests {
		res := mustPlan(t, tc.spec)
		if res.Preset != tc.preset || len(res.Stages) != tc.stages {
			t.Errorf("model %q, preset %q: planned preset %q with %d stages, want %q with %d", tc.spec.Model, tc.spec.Preset, res.Preset, len(res.Stages), tc.preset, tc.stages)
		}
	}
}

// A stages base written as stage_args takes its topology from the model's
// family when no preset knows the id exactly: a family's stages with one id
// are written alike.
func TestTopologyFromTheFamily(t *testing.T) {
	res := mustPlan(t, Spec{Model: "Qwen/Qwen3-Omni", Format: "stage_args", BaseConfig: readLocal(t, stagesQwen3), SplitStage: ptr(0)})
	st := stageList(t, config(t, res.ConfigYAML))
	if len(st) != 4 || dig(st[2], "custom_process_input_func") != processorPrefix+"thinker2talker" {
		t.Errorf("want the talker's processor from qwen3_omni_moe's topology, got:\n%s", res.ConfigYAML)
	}
	if res.Preset != "" {
		t.Errorf("a base config's plan reports preset %q", res.Preset)
	}
}

// TestThinkerOnlyFacts is TestSeedFacts for a Qwen3-Omni model without
// audio output: with only the model set, prefill and decode of the thinker
// alone, decode the final text output, on the default release.
func TestThinkerOnlyFacts(t *testing.T) {
	res := mustPlan(t, Spec{Model: thinkingModel})
	cfg := config(t, res.ConfigYAML)
	st := stageList(t, cfg)
	if len(st) != 2 {
		t.Fatalf("%d stages, want 2:\n%s", len(st), res.ConfigYAML)
	}
	type fact struct {
		what      string
		got, want any
	}
	var facts []fact
	add := func(what string, got, want any) { facts = append(facts, fact{what, got, want}) }

	p, d := st[0], st[1]
	add("prefill stage_id", p["stage_id"], 0)
	add("prefill is_prefill_only", p["is_prefill_only"], true)
	add("prefill model_stage", dig(p, "engine_args", "model_stage"), "thinker")
	add("prefill engine_output_type", dig(p, "engine_args", "engine_output_type"), "latent")
	add("prefill devices", dig(p, "runtime", "devices"), "0")
	add("prefill max_num_seqs", dig(p, "engine_args", "max_num_seqs"), 16)
	add("prefill kv_transfer_config", dig(p, "engine_args", "kv_transfer_config"), map[string]any{
		"kv_connector": "NixlConnector", "kv_role": "kv_producer", "kv_rank": 0, "kv_parallel_size": 2,
	})
	add("prefill final_output", p["final_output"], false)
	add("prefill has no final_output_type", has(p, "final_output_type"), false)
	add("prefill sampling", p["default_sampling_params"], thinkerSampling)

	add("decode stage_id", d["stage_id"], 1)
	add("decode is_decode_only", d["is_decode_only"], true)
	add("decode model_stage", dig(d, "engine_args", "model_stage"), "thinker")
	add("decode devices", dig(d, "runtime", "devices"), "1")
	add("decode max_num_seqs", dig(d, "engine_args", "max_num_seqs"), 64)
	add("decode engine_input_source", d["engine_input_source"], []any{0})
	add("decode final_output", d["final_output"], true)
	add("decode final_output_type", d["final_output_type"], "text")
	add("decode sampling", d["default_sampling_params"], thinkerSampling)
	for i, s := range st {
		add(fmt.Sprintf("stage %d has no input processor", i), has(s, "custom_process_input_func") || has(s, "sync_process_input_func"), false)
	}
	add("runtime.edges", dig(cfg, "runtime", "edges"), []any{map[string]any{"from": 0, "to": 1}})

	add("Preset", res.Preset, "qwen3_omni_moe_thinker_only")
	add("Release", res.Release, "0.24.0")
	add("Format", res.Format, "stage_args")
	add("GPUCount", res.GPUCount, 2)
	var roles []string
	for _, s := range res.Stages {
		roles = append(roles, s.Role)
	}
	add("stage roles", roles, []string{RolePrefill, RoleDecode})
	var ports []string
	for _, p := range res.Ports {
		ports = append(ports, fmt.Sprintf("%s=%d", p.Name, p.Port))
	}
	add("ports", ports, []string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25202", "omni_master=25203"})
	if len(res.Launches) == 1 {
		var procs []string
		for _, proc := range res.Launches[0].Processes {
			procs = append(procs, fmt.Sprintf("%d:%s", *proc.StageID, proc.Role))
		}
		add("processes", procs, []string{"0:head", "1:headless"})
	} else {
		t.Errorf("%d launches, want 1", len(res.Launches))
	}

	for _, f := range facts {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s = %#v, want %#v", f.what, f.got, f.want)
		}
	}
}

// The thinker-only plan has no input processor to lose, so it runs PD
// natively on every release that loads stage_args and has PD, release
// candidates included; the default stays the newest final one, 0.24.0.
func TestThinkerOnlyReleases(t *testing.T) {
	for _, v := range releases.Versions() {
		r, _ := releases.Lookup(v)
		if !r.Reads(releases.StageArgs) {
			continue
		}
		res := mustPlan(t, Spec{Model: captionerModel, VLLMOmniVersion: v})
		if res.Release != v || len(res.Stages) != 2 {
			t.Errorf("%s: planned for %s with %d stages", v, res.Release, len(res.Stages))
		}
	}
}
