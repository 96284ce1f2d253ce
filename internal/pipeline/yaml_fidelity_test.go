package pipeline

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// YAML fidelity across the whole plan, from the base config read to the
// config written: kept here rather than beside one step's file.

// A base config is read as vllm-omni reads it (OmegaConf.load), and each
// value the planner cannot read that way ends as an error at base_config
// with its line and the fix; everything else is planned, and what the
// planner writes reads back in OmegaConf as it meant. These tables hold
// several inputs per class, each a small variation on miniBase.

// fidelityError is a base config the planner must refuse.
type fidelityError struct {
	name string
	base func(t *testing.T) string
	code string
	line int    // the line the detail names
	fix  string // a Go regexp the detail matches
}

func fidelityErrors() []fidelityError {
	with := func(old, replacement string) func(t *testing.T) string {
		return func(t *testing.T) string { return miniBaseWith(t, old, replacement) }
	}
	appended := func(s string) func(t *testing.T) string {
		return func(*testing.T) string { return miniBase + s }
	}
	return []fidelityError{
		// Numbers written as text, or not as whole numbers, where the
		// planner reads a count: it would plan TP 1 or no limit.
		{"tp quoted on the split stage", with("worker_type: ar, gpu_memory_utilization: 0.5}", `worker_type: ar, gpu_memory_utilization: 0.5, tensor_parallel_size: "2"}`),
			"yaml_value_type", 3, `tensor_parallel_size is the text "2".*write 2 without quotes`},
		{"tp quoted on another stage", with("model_stage: talker, worker_type: ar", `model_stage: talker, tensor_parallel_size: '2', worker_type: ar`),
			"yaml_value_type", 7, `stage_args\[1\].engine_args.tensor_parallel_size`},
		{"tp yes", with("model_stage: talker, worker_type: ar", "model_stage: talker, tensor_parallel_size: yes, worker_type: ar"),
			"yaml_value_type", 7, `the boolean true`},
		{"tp a float", with("model_stage: code2wav,", "model_stage: code2wav, tensor_parallel_size: 1.0,"),
			"yaml_value_type", 10, `write 1\.`},
		{"tp 0o2", with("model_stage: talker, worker_type: ar", "model_stage: talker, tensor_parallel_size: 0o2, worker_type: ar"),
			"yaml_value_type", 7, `YAML 1.2 reads it as 2.*write 2`},
		{"max_num_seqs quoted", with("model_stage: talker, worker_type: ar", `model_stage: talker, max_num_seqs: "8", worker_type: ar`),
			"yaml_value_type", 7, `max_num_seqs`},
		{"stage_id quoted", with("  - stage_id: 1\n", "  - stage_id: \"1\"\n"),
			"yaml_value_type", 6, `stage_id is the text "1".*write 1 without quotes`},
		{"final_output quoted", with("    final_output: true\n    final_output_type: audio", "    final_output: \"true\"\n    final_output_type: audio"),
			"yaml_value_type", 12, `write true without quotes`},
		{"memory quoted", with("gpu_memory_utilization: 0.4}", `gpu_memory_utilization: "0.4"}`),
			"yaml_value_type", 7, `write 0.4 without quotes`},
		// .nan and .inf where a number is meant.
		{"memory nan", with("gpu_memory_utilization: 0.4}", "gpu_memory_utilization: .nan}"),
			"yaml_value_not_finite", 7, `\.nan, which is not a finite number`},
		{"memory inf on the split stage", with("gpu_memory_utilization: 0.5}", "gpu_memory_utilization: .inf}"),
			"yaml_value_not_finite", 3, `not a finite number`},
		{"tp nan", with("model_stage: talker, worker_type: ar", "model_stage: talker, tensor_parallel_size: .NaN, worker_type: ar"),
			"yaml_value_not_finite", 7, `not a number`},
		// Known keys of the wrong shape, which the planner would replace.
		{"top runtime a list", appended("runtime: [enabled]\n"), "yaml_shape", 14, `runtime is a list, where vllm-omni reads a mapping`},
		{"top runtime a string", appended("runtime: enabled\n"), "yaml_shape", 14, `runtime is the text "enabled"`},
		{"stage runtime a list", with("  - stage_id: 1\n", "  - stage_id: 1\n    runtime: [0]\n"), "yaml_shape", 7, `stage_args\[1\].runtime is a list`},
		{"engine_args a scalar", with("    engine_args: {model_stage: talker, worker_type: ar, gpu_memory_utilization: 0.4}\n", "    engine_args: talker\n"),
			"yaml_shape", 7, `engine_args is the text "talker"`},
		{"kv_transfer_config a string", with("model_stage: thinker,", "model_stage: thinker, kv_transfer_config: MooncakeConnector,"),
			"yaml_shape", 3, `kv_transfer_config is the text`},
		{"edges a mapping", appended("runtime:\n  edges: {from: 0, to: 1}\n"), "yaml_shape", 15, `runtime.edges is a mapping, where vllm-omni reads a list`},
		// Interpolations where the planner reads or rewrites the value.
		{"tp interpolated", with("model_stage: talker, worker_type: ar", "model_stage: talker, tensor_parallel_size: \"${tp}\", worker_type: ar"),
			"yaml_interpolation", 7, `OmegaConf interpolation.*write the value out`},
		{"devices interpolated", with("  - stage_id: 1\n", "  - stage_id: 1\n    runtime: {devices: \"${oc.env:GPUS}\"}\n"),
			"yaml_interpolation", 7, `runtime.devices`},
		{"model_stage interpolated", with("model_stage: code2wav", "model_stage: \"${vocoder}\""),
			"yaml_interpolation", 10, `model_stage`},
		{"input interpolated", with("    engine_input_source: [1]\n", "    engine_input_source:\n      - ${talker}\n"),
			"yaml_interpolation", 12, `engine_input_source\[0\]`},
		// What the loader cannot read at all.
		{"python tag", with("final_output_type: text", "final_output_type: !!python/name:builtins.str"),
			"base_config_invalid", 5, `asks for a Python object`},
		{"custom tag", with("final_output_type: text", "final_output_type: !text x"),
			"base_config_invalid", 5, `tag !text is not supported`},
		{"merge of a scalar", with("  - stage_id: 1\n", "  - stage_id: 1\n    <<: defaults\n"),
			"base_config_invalid", 7, `takes a mapping or a list of mappings`},
		{"bare =", with("final_output_type: text", "final_output_type: ="),
			"base_config_invalid", 5, "write \"=\" in quotes"},
		{"keys the loader reads as one", with("  - stage_id: 1\n", "  - stage_id: 1\n    default_sampling_params: {yes: 1, on: 2}\n"),
			"base_config_invalid", 7, `are one key`},
		{"interpolation never closed", with("final_output_type: text", "final_output_type: \"${kind\""),
			"base_config_invalid", 5, `never closed`},
	}
}

// TestPlanRefusesBaseConfigsReadOtherwise: each case is one error (or a
// group of them), at base_config, with the line and the fix, and no plan.
func TestPlanRefusesBaseConfigsReadOtherwise(t *testing.T) {
	seen := map[string]int{}
	for _, c := range fidelityErrors() {
		t.Run(c.name, func(t *testing.T) {
			res, ds := Plan(Spec{Model: seedModel, BaseConfig: c.base(t)})
			if res != nil || !ds.HasErrors() {
				t.Fatalf("planned:\n%s", res.ConfigYAML)
			}
			errs := ds.Errors()
			d := errs[0]
			if d.Code.String() != c.code || d.Path.String() != "base_config" {
				t.Fatalf("first error %s; want %s at base_config\n%s", d, c.code, describeDiags(ds))
			}
			if !strings.HasPrefix(d.Detail, fmt.Sprintf("line %d", c.line)) {
				t.Errorf("detail %q does not start with line %d", d.Detail, c.line)
			}
			if !regexp.MustCompile(c.fix).MatchString(d.Detail) || !fixHint.MatchString(d.Detail) {
				t.Errorf("detail %q does not match %q, or gives no fix", d.Detail, c.fix)
			}
			if len(errs) != 1 {
				t.Errorf("%d errors, want the one:\n%s", len(errs), describeDiags(ds))
			}
		})
		seen[c.code]++
	}
	for _, code := range []string{"yaml_value_type", "yaml_value_not_finite", "yaml_shape", "yaml_interpolation", "base_config_invalid"} {
		if seen[code] < 3 {
			t.Errorf("only %d cases of %s; keep several per class", seen[code], code)
		}
	}
}

// omegaconfJSON reads a config as vllm-omni does and returns its data as
// JSON values (keys as strings), interpolations unresolved.
func omegaconfJSON(t *testing.T, src string) map[string]any {
	t.Helper()
	v := pythonJSON(t, testtool.Python(t, "omegaconf"), "OmegaConf", `import sys, json
from omegaconf import OmegaConf
json.dump(OmegaConf.to_container(OmegaConf.create(sys.stdin.read()), resolve=False), sys.stdout)`, src)
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("OmegaConf reads the config as %T, not a mapping:\n%s", v, src)
	}
	return m
}

const mergedBase = `# Every stage takes its topology from one anchor.
defaults: &llm
  stage_type: llm
  engine_args: &engine
    model_stage: thinker
    model_arch: Qwen3OmniMoeForConditionalGeneration
    worker_type: ar
    gpu_memory_utilization: 0.5
stage_args:
  - <<: *llm  # the thinker
    stage_id: 0
    final_output: true
    final_output_type: text
  - <<: *llm
    stage_id: 1
    engine_args:
      <<: *engine
      model_stage: talker
      gpu_memory_utilization: 0.4
    engine_input_source: [0]
  - stage_id: 2
    engine_args: {<<: *engine, model_stage: code2wav, worker_type: generation, gpu_memory_utilization: 0.1}
    engine_input_source: [1]
    final_output: true
    final_output_type: audio
`

// TestPlanMergedStagesKeepWhatTheyMerged: a stage that takes engine_args
// through `<<` keeps model_stage, model_arch and worker_type once the
// planner sets engine settings on it, read as vllm-omni reads the output.
func TestPlanMergedStagesKeepWhatTheyMerged(t *testing.T) {
	for _, format := range []string{"", "stages"} {
		t.Run("format "+format, func(t *testing.T) {
			spec := Spec{Model: seedModel, BaseConfig: mergedBase, Format: format,
				Prefill: RoleSpec{EngineArgs: map[string]any{"enforce_eager": true}}}
			if format == "stages" {
				spec.Pipeline, spec.VLLMOmniVersion = "qwen3_omni_moe_pd", "0.28.0"
			}
			res, ds := Plan(spec)
			if res == nil {
				t.Fatalf("not planned:\n%s", describeDiags(ds))
			}
			if !hasCodeAny(ds.Warnings(), "yaml_anchors_written_out") {
				t.Errorf("no warning that the anchors are written out:\n%s", describeDiags(ds))
			}
			if strings.Contains(res.ConfigYAML, "<<") || strings.Contains(res.ConfigYAML, "*llm") {
				t.Errorf("a merge key or alias is left:\n%s", res.ConfigYAML)
			}
			cfg := omegaconfJSON(t, res.ConfigYAML)
			stages, _ := cfg["stage_args"].([]any)
			if format == "stages" {
				stages, _ = cfg["stages"].([]any)
			}
			if len(stages) != 4 {
				t.Fatalf("%d stages:\n%s", len(stages), res.ConfigYAML)
			}
			wantStage := []string{"thinker", "thinker", "talker", "code2wav"}
			for i, st := range stages {
				engine := st
				if format == "" {
					engine = dig(st, "engine_args")
					if dig(engine, "model_arch") != "Qwen3OmniMoeForConditionalGeneration" || dig(engine, "model_stage") != wantStage[i] || dig(engine, "worker_type") == nil {
						t.Errorf("stage %d engine_args lost what it merged: %v", i, engine)
					}
				}
				if i < 2 && dig(engine, "kv_transfer_config") == nil {
					t.Errorf("stage %d has no kv_transfer_config: %v", i, engine)
				}
			}
			if dig(stages[0], "enforce_eager") != true && dig(stages[0], "engine_args", "enforce_eager") != true {
				t.Errorf("prefill lost the spec's engine_args: %v", stages[0])
			}
			if !strings.Contains(res.ConfigYAML, "# the thinker") {
				t.Errorf("the comment on the merge line is lost:\n%s", res.ConfigYAML)
			}
		})
	}
}

// TestPlanHonoursYAML11: values vllm-omni reads through YAML 1.1's rules
// are planned as it reads them.
func TestPlanHonoursYAML11(t *testing.T) {
	t.Run("final_output yes, on, True", func(t *testing.T) {
		for _, word := range []string{"yes", "on", "True", "YES"} {
			base := strings.ReplaceAll(miniBase, "final_output: true", "final_output: "+word)
			res := mustPlan(t, Spec{Model: seedModel, BaseConfig: base})
			final := 0
			for _, s := range res.Stages {
				if s.FinalOutput {
					final++
				}
			}
			// The decode half of the thinker and code2wav return output.
			if final != 2 {
				t.Errorf("%s: %d final stages, want 2: %+v", word, final, res.Stages)
			}
			cfg := omegaconfJSON(t, res.ConfigYAML)
			if got := dig(cfg, "stage_args", 3, "final_output"); got != true {
				t.Errorf("%s: code2wav's final_output reads as %v", word, got)
			}
			if got := dig(cfg, "stage_args", 0, "final_output"); got != false {
				t.Errorf("%s: prefill's final_output reads as %v", word, got)
			}
		}
	})
	t.Run("is_prefill_only yes is a split base", func(t *testing.T) {
		for _, word := range []string{"yes", "on"} {
			base := miniBaseWith(t, "    final_output: true\n    final_output_type: text\n", "    final_output: true\n    final_output_type: text\n    is_prefill_only: "+word+"\n")
			if _, ds := Plan(Spec{Model: seedModel, BaseConfig: base}); !hasCodeAny(ds, "base_already_split") {
				t.Errorf("%s: %s", word, describeDiags(ds))
			}
		}
	})
	t.Run("numbers in every spelling both readers agree on", func(t *testing.T) {
		for _, tp := range []string{"0x2", "02", "2", "!!int 2", "+2"} {
			base := miniBaseWith(t, "model_stage: talker, worker_type: ar", "model_stage: talker, tensor_parallel_size: "+tp+", worker_type: ar")
			res := mustPlan(t, Spec{Model: seedModel, BaseConfig: base})
			if s := res.Stages[2]; s.TensorParallelSize != 2 || len(s.Devices) != 2 {
				t.Errorf("tensor_parallel_size %s: planned %+v", tp, s)
			}
		}
	})
}

// TestPlanKeepsFlowListComments: a rewritten engine_input_source keeps
// the comment written after it.
func TestPlanKeepsFlowListComments(t *testing.T) {
	for _, c := range []struct{ old, comment string }{
		{"    engine_input_source: [0]\n", "# from the thinker"},
		{"    engine_input_source: [1]\n", "# talker codes"},
	} {
		base := miniBaseWith(t, c.old, strings.TrimSuffix(c.old, "\n")+"  "+c.comment+"\n")
		res := mustPlan(t, Spec{Model: seedModel, BaseConfig: base})
		if !regexp.MustCompile(`engine_input_source: \[\d\] ` + c.comment + `\n`).MatchString(res.ConfigYAML) {
			t.Errorf("the comment %q is lost:\n%s", c.comment, res.ConfigYAML)
		}
	}
}

// TestPlanWritesKeysThatReadBack: keys from the spec that YAML 1.1 reads
// as something else plain are written so they read back as those keys;
// keys of the base keep the reading they had.
func TestPlanWritesKeysThatReadBack(t *testing.T) {
	keys := []string{"yes", "on", "1:30", "<<", "=", "null", "1e3", "0o7", "08", "2001-12-14"}
	args := map[string]any{}
	for _, k := range keys {
		args[k] = k
	}
	// Text yaml.v3 would write as a block it cannot read back.
	const template = "\t{{ messages }}\n  second line\n"
	args["chat_template"] = template
	base := miniBaseWith(t, "    engine_input_source: [1]\n", "    engine_input_source: [1]\n    default_sampling_params: {yes: plain, \"on\": quoted}\n")
	// The thinker's own key `on` is the boolean true, not the spec's "on".
	base = strings.Replace(base, "gpu_memory_utilization: 0.5}", "gpu_memory_utilization: 0.5, on: base}", 1)
	res := mustPlan(t, Spec{Model: seedModel, BaseConfig: base, Prefill: RoleSpec{EngineArgs: args}})
	cfg := omegaconfJSON(t, res.ConfigYAML)
	engine, _ := dig(cfg, "stage_args", 0, "engine_args").(map[string]any)
	for _, k := range keys {
		if engine[k] != k {
			t.Errorf("engine_args key %q reads back as %v (engine_args: %v)", k, engine[k], engine)
		}
	}
	if engine["chat_template"] != template {
		t.Errorf("chat_template reads back as %q", engine["chat_template"])
	}
	if ds := Check([]byte(res.ConfigYAML)); hasCodeAny(ds, "config_unreadable") {
		t.Errorf("the planned config does not parse again: %s", describeDiags(ds))
	}
	if engine["true"] != "base" {
		t.Errorf("the base's key on (true) reads back as %v (engine_args: %v)", engine["true"], engine)
	}
	// json turns the boolean key True into "true".
	if sp := dig(cfg, "stage_args", 3, "default_sampling_params"); fmt.Sprint(sp) != "map[on:quoted true:plain]" {
		t.Errorf("the base's own keys read as %v", sp)
	}
}

// TestPlanKeepsInterpolationsElsewhere: an interpolation the planner does
// not read is written as it was, with a warning.
func TestPlanKeepsInterpolationsElsewhere(t *testing.T) {
	for _, c := range []struct{ old, new, text string }{
		{"model_stage: talker,", "model_stage: talker, model: \"${oc.env:MODEL_DIR}\",", "${oc.env:MODEL_DIR}"},
		{"    engine_input_source: [1]\n", "    engine_input_source: [1]\n    default_sampling_params: {stop: \"${stops}\"}\n", "${stops}"},
		{"final_output_type: text", "final_output_type: text\n    note: 'a \\${b}'", `a \${b}`},
	} {
		res, ds := Plan(Spec{Model: seedModel, BaseConfig: miniBaseWith(t, c.old, c.new)})
		if res == nil {
			t.Fatalf("not planned:\n%s", describeDiags(ds))
		}
		if !hasCodeAny(ds.Warnings(), "yaml_interpolation_kept") {
			t.Errorf("%s: no warning:\n%s", c.text, describeDiags(ds))
		}
		cfg := omegaconfJSON(t, res.ConfigYAML)
		found := false
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case string:
				found = found || x == c.text
			}
		}
		walk(cfg)
		if !found {
			t.Errorf("%s is not in the planned config as written:\n%s", c.text, res.ConfigYAML)
		}
	}
}

// TestInspectAndCheckReadAsTheLoader: parse_stage_config and
// validate_stage_config read configs as vllm-omni does too.
func TestInspectAndCheckReadAsTheLoader(t *testing.T) {
	base := strings.ReplaceAll(miniBase, "final_output: true", "final_output: on")
	sum, err := Inspect([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Stages[0].FinalOutput || !sum.Stages[2].FinalOutput || sum.Stages[1].FinalOutput {
		t.Errorf("final outputs %+v, want stages 0 and 2", sum.Stages)
	}
	if ds := Check([]byte(base)); ds.HasErrors() {
		t.Errorf("Check: %s", describeDiags(ds))
	}
	for _, c := range fidelityErrors() {
		ds := Check([]byte(c.base(t)))
		want := c.code
		if want == "base_config_invalid" {
			want = "config_unreadable"
		}
		if !hasCodeAny(ds, want) {
			t.Errorf("%s: Check reports no %s:\n%s", c.name, want, describeDiags(ds))
		}
	}
}
