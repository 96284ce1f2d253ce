package stageconfig

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// lintCase is a config with one value the planner cannot plan with.
type lintCase struct {
	name string
	src  string
	code diagcode.Code
	line int
	fix  string // words of the detail
}

// engineWith is a one-stage stage_args config whose engine_args hold the
// given lines, the first on line 4.
func engineWith(lines ...string) string {
	return "stage_args:\n  - stage_id: 0\n    engine_args:\n      " + strings.Join(lines, "\n      ") + "\n"
}

// flatWith is a one-stage `stages` config with the given stage lines, the
// first on line 3.
func flatWith(lines ...string) string {
	return "stages:\n  - stage_id: 0\n    " + strings.Join(lines, "\n    ") + "\n"
}

func lintCases() []lintCase {
	return []lintCase{
		// Numbers written as text, booleans, floats and nulls where a whole
		// number is meant: each would be planned as if unset.
		{"tp quoted", engineWith(`tensor_parallel_size: "2"`), diagcode.YAMLValueType, 4, `is the text "2" \(it is quoted\).*write 2 without quotes`},
		{"tp single-quoted", engineWith(`tensor_parallel_size: '4'`), diagcode.YAMLValueType, 4, `write 4 without quotes`},
		{"tp a word", engineWith(`tensor_parallel_size: two`), diagcode.YAMLValueType, 4, `the text "two".*write one, such as 2`},
		{"tp yes", engineWith(`tensor_parallel_size: yes`), diagcode.YAMLValueType, 4, `the boolean true.*YAML 1.1`},
		{"tp a float", engineWith(`tensor_parallel_size: 2.0`), diagcode.YAMLValueType, 4, `float 2.0.*write 2`},
		{"tp a fraction", engineWith(`tensor_parallel_size: 1.5`), diagcode.YAMLValueType, 4, `the number 1.5`},
		{"tp null", engineWith(`tensor_parallel_size: ~`), diagcode.YAMLValueType, 4, `is null.*remove the key`},
		{"tp empty", engineWith(`tensor_parallel_size:`), diagcode.YAMLValueType, 4, `is null`},
		{"tp 0o octal", engineWith(`tensor_parallel_size: 0o2`), diagcode.YAMLValueType, 4, `YAML 1.2 reads it as 2.*write 2`},
		{"tp huge", engineWith(`tensor_parallel_size: 99999999999999999999`), diagcode.YAMLValueType, 4, `too large`},
		{"tp flat in stages", flatWith(`tensor_parallel_size: "2"`), diagcode.YAMLValueType, 3, `write 2 without quotes`},
		{"tp in parallel_config", engineWith("parallel_config:", `  tensor_parallel_size: "2"`), diagcode.YAMLValueType, 5, `parallel_config.tensor_parallel_size`},
		{"pp quoted", engineWith(`pipeline_parallel_size: "2"`), diagcode.YAMLValueType, 4, `pipeline_parallel_size`},
		{"max_num_seqs quoted", engineWith(`max_num_seqs: "8"`), diagcode.YAMLValueType, 4, `write 8 without quotes`},
		{"stage_id quoted", "stage_args:\n  - stage_id: \"0\"\n", diagcode.YAMLValueType, 2, `stage_id is the text "0"`},
		{"stage_id float", "stages:\n  - stage_id: 1.0\n", diagcode.YAMLValueType, 2, `write 1`},
		{"num_replicas quoted", flatWith(`num_replicas: "2"`), diagcode.YAMLValueType, 3, `num_replicas`},
		{"runtime.num_replicas a word", "stage_args:\n  - stage_id: 0\n    runtime: {num_replicas: many}\n", diagcode.YAMLValueType, 3, `runtime.num_replicas`},
		{"edge from quoted", "stage_args:\n  - stage_id: 0\nruntime:\n  edges:\n    - {from: \"0\", to: 1}\n", diagcode.YAMLValueType, 5, `runtime.edges\[0\].from`},
		{"bootstrap port quoted", engineWith("kv_transfer_config:", "  kv_connector_extra_config: {mooncake_bootstrap_port: \"25201\"}"), diagcode.YAMLValueType, 5, `mooncake_bootstrap_port is the text "25201"`},
		{"platform stage_id quoted", "stages:\n  - stage_id: 0\nplatforms:\n  rocm:\n    stages:\n      - stage_id: \"0\"\n", diagcode.YAMLValueType, 6, `platforms.rocm.stages\[0\].stage_id`},
		// Numbers.
		{"memory quoted", engineWith(`gpu_memory_utilization: "0.9"`), diagcode.YAMLValueType, 4, `write 0.9 without quotes`},
		{"memory a word", engineWith(`gpu_memory_utilization: high`), diagcode.YAMLValueType, 4, `such as 0.9`},
		{"memory null", engineWith(`gpu_memory_utilization: null`), diagcode.YAMLValueType, 4, `is null`},
		{"memory a boolean", engineWith(`gpu_memory_utilization: on`), diagcode.YAMLValueType, 4, `the boolean true`},
		// Booleans.
		{"final_output quoted", "stage_args:\n  - stage_id: 0\n    final_output: \"true\"\n", diagcode.YAMLValueType, 3, `write true without quotes`},
		{"final_output quoted yes", "stage_args:\n  - stage_id: 0\n    final_output: 'yes'\n", diagcode.YAMLValueType, 3, `write yes without quotes`},
		{"final_output a number", "stage_args:\n  - stage_id: 0\n    final_output: 1\n", diagcode.YAMLValueType, 3, `the integer 1.*true or false`},
		{"is_prefill_only a word", "stage_args:\n  - stage_id: 0\n    is_prefill_only: prefill\n", diagcode.YAMLValueType, 3, `true or false`},
		{"async_chunk quoted", "stages:\n  - stage_id: 0\nasync_chunk: \"false\"\n", diagcode.YAMLValueType, 3, `write false without quotes`},
		{"runtime.enabled a word", "stage_args:\n  - stage_id: 0\nruntime:\n  enabled: yep\n", diagcode.YAMLValueType, 4, `runtime.enabled`},
		// Text that YAML 1.1 reads as something else.
		{"model_stage no", engineWith(`model_stage: no`), diagcode.YAMLValueType, 4, `the boolean false, not text.*"no"`},
		{"worker_type on", engineWith(`worker_type: on`), diagcode.YAMLValueType, 4, `the boolean true`},
		{"kv_role a number", engineWith("kv_transfer_config: {kv_role: 1}"), diagcode.YAMLValueType, 4, `kv_transfer_config.kv_role is the integer 1`},
		{"model_stage a list", engineWith("model_stage: [a]"), diagcode.YAMLValueType, 4, `model_stage is a list`},
		{"pipeline a number", "pipeline: 3\nstages:\n  - stage_id: 0\n", diagcode.YAMLValueType, 1, `pipeline is the integer 3`},
		{"env value on", flatWith("env: {FLAG: on}"), diagcode.YAMLValueType, 3, `env.FLAG \(stage 0\) is the boolean true.*"on"`},
		{"runtime env value yes", "stage_args:\n  - stage_id: 0\n    runtime:\n      env: {A: yes}\n", diagcode.YAMLValueType, 4, `runtime.env.A`},
		// Not finite.
		{"memory nan", engineWith(`gpu_memory_utilization: .nan`), diagcode.YAMLValueNotFinite, 4, `.nan, which is not a finite number`},
		{"memory inf", engineWith(`gpu_memory_utilization: .inf`), diagcode.YAMLValueNotFinite, 4, `not a finite number`},
		{"memory -inf", engineWith(`gpu_memory_utilization: -.Inf`), diagcode.YAMLValueNotFinite, 4, `not a finite number`},
		{"tp nan", engineWith(`tensor_parallel_size: .NaN`), diagcode.YAMLValueNotFinite, 4, `not a number`},
		{"max_num_seqs inf", engineWith(`max_num_seqs: .inf`), diagcode.YAMLValueNotFinite, 4, `not a number`},
		{"memory 1e400", engineWith(`gpu_memory_utilization: 1e400`), diagcode.YAMLValueNotFinite, 4, `not a finite number`},
		{"kv_buffer_size inf", engineWith("kv_transfer_config: {kv_buffer_size: .inf}"), diagcode.YAMLValueNotFinite, 4, `kv_buffer_size`},
		// Known keys of the wrong shape, which the planner would replace.
		{"top runtime a list", "stage_args:\n  - stage_id: 0\nruntime: [enabled]\n", diagcode.YAMLShape, 3, `runtime is a list, where vllm-omni reads a mapping`},
		{"top runtime a string", "stage_args:\n  - stage_id: 0\nruntime: on-demand\n", diagcode.YAMLShape, 3, `runtime is the text "on-demand"`},
		{"stage runtime a list", "stage_args:\n  - stage_id: 0\n    runtime: [0]\n", diagcode.YAMLShape, 3, `stage_args\[0\].runtime is a list`},
		{"engine_args a scalar", "stage_args:\n  - stage_id: 0\n    engine_args: eager\n", diagcode.YAMLShape, 3, `engine_args is the text "eager"`},
		{"engine_args a list", "stages:\n  - stage_id: 0\n    engine_args: [a]\n", diagcode.YAMLShape, 3, `engine_args is a list`},
		{"env a list", flatWith("env: [A=1]"), diagcode.YAMLShape, 3, `env is a list`},
		{"kv_transfer_config a string", engineWith("kv_transfer_config: MooncakeConnector"), diagcode.YAMLShape, 4, `kv_transfer_config is the text`},
		{"extra config a list", engineWith("kv_transfer_config:", "  kv_connector_extra_config: [a]"), diagcode.YAMLShape, 5, `kv_connector_extra_config is a list`},
		{"edges a mapping", "stages:\n  - stage_id: 0\nedges: {from: 0, to: 1}\n", diagcode.YAMLShape, 3, `edges is a mapping, where vllm-omni reads a list`},
		{"edge a scalar", "stage_args:\n  - stage_id: 0\nruntime:\n  edges: [0-1]\n", diagcode.YAMLShape, 4, `runtime.edges\[0\] is the text`},
		{"connectors a list", "stage_args:\n  - stage_id: 0\nruntime:\n  connectors: [mooncake]\n", diagcode.YAMLShape, 4, `runtime.connectors is a list`},
		{"input_connectors a list", "stages:\n  - stage_id: 0\n    input_connectors: [c]\n", diagcode.YAMLShape, 3, `input_connectors is a list`},
		{"platforms a list", "stages:\n  - stage_id: 0\nplatforms: [rocm]\n", diagcode.YAMLShape, 3, `platforms is a list`},
		{"platform stages a mapping", "stages:\n  - stage_id: 0\nplatforms:\n  rocm:\n    stages: {stage_id: 0}\n", diagcode.YAMLShape, 5, `platforms.rocm.stages is a mapping`},
		{"parallel_config a number", engineWith("parallel_config: 2"), diagcode.YAMLShape, 4, `parallel_config is the integer 2`},
		// Interpolations the planner would have to read or rewrite.
		{"tp interpolated", engineWith("tensor_parallel_size: ${tp}"), diagcode.YAMLInterpolation, 4, `tensor_parallel_size is "\$\{tp\}", an OmegaConf interpolation.*write the value out`},
		{"devices interpolated", flatWith(`devices: "${oc.env:GPUS}"`), diagcode.YAMLInterpolation, 3, `devices is`},
		{"runtime devices interpolated", "stage_args:\n  - stage_id: 0\n    runtime: {devices: \"${d}\"}\n", diagcode.YAMLInterpolation, 3, `runtime.devices`},
		{"model_stage interpolated", engineWith("model_stage: ${name}"), diagcode.YAMLInterpolation, 4, `model_stage`},
		{"engine_args interpolated", "stage_args:\n  - stage_id: 0\n    engine_args: ${base}\n", diagcode.YAMLInterpolation, 3, `engine_args is`},
		{"input entry interpolated", "stage_args:\n  - stage_id: 0\n    engine_input_source:\n      - ${first}\n", diagcode.YAMLInterpolation, 4, `engine_input_source\[0\]`},
		{"final_output interpolated", "stage_args:\n  - stage_id: 0\n    final_output: ${last}\n", diagcode.YAMLInterpolation, 3, `final_output`},
		{"host interpolated", flatWith("env: {VLLM_HOST_IP: \"${oc.env:HOST}\"}"), diagcode.YAMLInterpolation, 3, `env.VLLM_HOST_IP`},
		{"connector name interpolated", "stage_args:\n  - stage_id: 0\n    input_connectors: {from_stage_1: \"${c}\"}\n", diagcode.YAMLInterpolation, 3, `input_connectors.from_stage_1`},
		{"kv_connector interpolated", engineWith("kv_transfer_config: {kv_connector: \"${k}\"}"), diagcode.YAMLInterpolation, 4, `kv_connector`},
		{"edge interpolated", "stages:\n  - stage_id: 0\nedges:\n  - {from: 0, to: \"${next}\"}\n", diagcode.YAMLInterpolation, 4, `edges\[0\].to`},
		{"pipeline interpolated", "pipeline: ${p}\nstages:\n  - stage_id: 0\n", diagcode.YAMLInterpolation, 1, `pipeline`},
	}
}

func TestLint(t *testing.T) {
	for _, c := range lintCases() {
		t.Run(c.name, func(t *testing.T) {
			fs := mustParse(t, c.src).Lint()
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1: %+v", len(fs), fs)
			}
			f := fs[0]
			if f.Code != c.code || f.line != c.line {
				t.Errorf("code %s at line %d, want %s at line %d: %s", f.Code, f.line, c.code, c.line, f.Detail)
			}
			if !strings.HasPrefix(f.Detail, fmt.Sprintf("line %d: ", c.line)) || f.Summary == "" {
				t.Errorf("detail %q does not start with the line, or no summary", f.Detail)
			}
			if !matches(c.fix, f.Detail) {
				t.Errorf("detail %q does not match %q", f.Detail, c.fix)
			}
		})
	}
}

// TestLintCollectsAll: one pass, every finding, in document order.
func TestLintCollectsAll(t *testing.T) {
	src := "stage_args:\n  - stage_id: \"0\"\n    engine_args:\n      tensor_parallel_size: \"2\"\n      gpu_memory_utilization: .nan\n    final_output: \"yes\"\n  - stage_id: 1\n    runtime: [0]\nruntime: []\n"
	var lines []int
	for _, f := range mustParse(t, src).Lint() {
		lines = append(lines, f.line)
	}
	if fmt.Sprint(lines) != "[2 4 5 6 8 9]" {
		t.Errorf("lines %v, want [2 4 5 6 8 9]", lines)
	}
}

// TestLintAccepts what vllm-omni reads as the planner does: YAML 1.1
// booleans where a boolean is meant, numbers in any spelling both readers
// agree on, nulls where null reads as unset, interpolations elsewhere.
func TestLintAccepts(t *testing.T) {
	for _, src := range []string{
		"stage_args:\n  - stage_id: 0\n    final_output: yes\n    is_prefill_only: off\n",
		"stage_args:\n  - stage_id: 0\n    final_output: True\n    final_output_type: null\n",
		engineWith("tensor_parallel_size: 0x2", "max_num_seqs: 1_000", "gpu_memory_utilization: 9e-1"),
		engineWith("tensor_parallel_size: !!int 2", "gpu_memory_utilization: 1"),
		engineWith("model_stage: \"no\"", "worker_type: 'on'"),
		engineWith("kv_transfer_config:", "kv_connector_extra_config: {mooncake_bootstrap_port: 25201, host: \"${MOONCAKE_HOST}\"}"),
		"stage_args:\n  - stage_id: 0\n    engine_args: ~\n    runtime:\n",
		"stage_args:\n  - stage_id: 0\n    default_sampling_params: {temperature: .nan, stop: \"${s}\"}\n",
		flatWith("devices: \"0,1\"", "env: {VLLM_HOST_IP: 10.0.0.1, PORT: 8000}", "enforce_eager: yes"),
	} {
		if fs := mustParse(t, src).Lint(); len(fs) > 0 {
			t.Errorf("%q: %+v", src, fs)
		}
	}
}

// TestLintCleanOnUpstreamConfigs: every upstream config and preset
// passes, so the checks refuse only what vllm-omni's own files never do.
func TestLintCleanOnUpstreamConfigs(t *testing.T) {
	files := configFiles(t)
	if len(files) < 9 {
		t.Fatalf("only %d configs found", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(src)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, x := range d.Lint() {
			t.Errorf("%s: %s", f, x.Detail)
		}
	}
}

func TestInterpolationsElsewhere(t *testing.T) {
	src := "stage_args:\n  - stage_id: 0\n    engine_args:\n      model: \"${oc.env:MODEL}\"\n      tensor_parallel_size: 2\n    default_sampling_params: {stop: 'a\\${b}'}\nruntime:\n  connectors:\n    c:\n      name: MooncakeConnector\n      extra: {host: \"${MOONCAKE_HOST}\", plain: x}\n\"${k}\": key\n"
	d := mustParse(t, src)
	var got []string
	_, interps := d.LintAll()
	for _, n := range interps {
		got = append(got, fmt.Sprintf("%d:%s", n.Line, n.Text))
	}
	if want := `[4:${oc.env:MODEL} 6:a\${b} 11:${MOONCAKE_HOST}]`; fmt.Sprint(got) != want {
		t.Errorf("interpolations %v, want %s", got, want)
	}
	if fs := d.Lint(); len(fs) > 0 {
		t.Errorf("interpolations outside the planner's values are errors: %+v", fs)
	}
}

// matches reports whether text matches the regexp pattern.
func matches(pattern, text string) bool { return regexp.MustCompile(pattern).MatchString(text) }
