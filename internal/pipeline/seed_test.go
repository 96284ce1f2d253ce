package pipeline

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// The seed recipe is checked against the whole plan, so these tests stay
// here and not beside one step's file.

// The seed recipe is the product's acceptance test: with only the model
// set, the planned config must be the recipe's. TestSeedFacts states each
// fact of the recipe on its own so that a failure names the fact;
// TestSeedThinkerBlock compares against the recipe's own YAML text.

const (
	processorPrefix = "vllm_omni.model_executor.stage_input_processors.qwen3_omni."
	arScheduler     = "vllm_omni.core.sched.omni_ar_scheduler.OmniARScheduler"
)

// thinkerSampling are the thinker's default sampling params in the recipe.
var thinkerSampling = map[string]any{
	"temperature": 0.4, "top_p": 0.9, "top_k": 1, "max_tokens": 2048,
	"seed": 42, "detokenize": true, "repetition_penalty": 1.05,
}

func TestSeedFacts(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel})
	cfg := config(t, res.ConfigYAML)
	if !has(cfg, "stage_args") || has(cfg, "stages") {
		t.Fatalf("the default output must be the seed's stage_args dialect; top-level keys: %v", keysOf(cfg))
	}
	st := stageList(t, cfg)
	if len(st) != 4 {
		t.Fatalf("%d stages, want 4", len(st))
	}
	type fact struct {
		what string
		got  any
		want any
	}
	var facts []fact
	add := func(what string, got, want any) { facts = append(facts, fact{what, got, want}) }
	for i, s := range st {
		add(fmt.Sprintf("stage_args[%d].stage_id", i), s["stage_id"], i)
	}

	p := st[0]
	add("prefill is_prefill_only", p["is_prefill_only"], true)
	add("prefill has no is_decode_only", has(p, "is_decode_only"), false)
	add("prefill stage_type", p["stage_type"], "llm")
	add("prefill devices", dig(p, "runtime", "devices"), "0")
	add("prefill model_stage", dig(p, "engine_args", "model_stage"), "thinker")
	add("prefill scheduler", dig(p, "engine_args", "scheduler_cls"), arScheduler)
	add("prefill max_num_seqs", dig(p, "engine_args", "max_num_seqs"), 16)
	add("prefill tensor_parallel_size", dig(p, "engine_args", "tensor_parallel_size"), 1)
	// The recipe's roles and ranks, over the connector that passes the
	// handoff gate (releases.SeedDeviations).
	add("prefill kv_transfer_config", dig(p, "engine_args", "kv_transfer_config"), map[string]any{
		"kv_connector": "NixlConnector", "kv_role": "kv_producer", "kv_rank": 0, "kv_parallel_size": 2,
	})
	add("prefill final_output", p["final_output"], false)
	add("prefill has no final_output_type", has(p, "final_output_type"), false)
	add("prefill has no engine_input_source", has(p, "engine_input_source"), false)
	add("prefill is_comprehension", p["is_comprehension"], true)
	add("prefill sampling", p["default_sampling_params"], thinkerSampling)
	add("prefill side channel env", dig(p, "runtime", "env", "VLLM_NIXL_SIDE_CHANNEL_PORT"), "25201")

	d := st[1]
	add("decode is_decode_only", d["is_decode_only"], true)
	add("decode has no is_prefill_only", has(d, "is_prefill_only"), false)
	add("decode devices", dig(d, "runtime", "devices"), "1")
	add("decode model_stage", dig(d, "engine_args", "model_stage"), "thinker")
	add("decode max_num_seqs", dig(d, "engine_args", "max_num_seqs"), 64)
	add("decode tensor_parallel_size", dig(d, "engine_args", "tensor_parallel_size"), 1)
	add("decode kv_transfer_config", dig(d, "engine_args", "kv_transfer_config"), map[string]any{
		"kv_connector": "NixlConnector", "kv_role": "kv_consumer", "kv_rank": 1, "kv_parallel_size": 2,
	})
	add("decode engine_input_source", d["engine_input_source"], []any{0})
	add("decode final_output", d["final_output"], true)
	add("decode final_output_type", d["final_output_type"], "text")
	add("decode sampling", d["default_sampling_params"], thinkerSampling)
	add("decode side channel env", dig(d, "runtime", "env", "VLLM_NIXL_SIDE_CHANNEL_PORT"), "25202")

	tk := st[2]
	add("talker model_stage", dig(tk, "engine_args", "model_stage"), "talker")
	add("talker devices", dig(tk, "runtime", "devices"), "2")
	add("talker engine_input_source", tk["engine_input_source"], []any{1})
	add("talker has no sync_process_input_func", has(tk, "sync_process_input_func"), false)
	add("talker custom_process_input_func", tk["custom_process_input_func"], processorPrefix+"thinker2talker")
	add("talker has no kv_transfer_config", dig(tk, "engine_args", "kv_transfer_config"), nil)
	add("talker stop_token_ids", dig(tk, "default_sampling_params", "stop_token_ids"), []any{2150})

	cw := st[3]
	add("code2wav model_stage", dig(cw, "engine_args", "model_stage"), "code2wav")
	add("code2wav devices", dig(cw, "runtime", "devices"), "2")
	add("code2wav max_num_seqs", dig(cw, "engine_args", "max_num_seqs"), 1)
	add("code2wav engine_input_source", cw["engine_input_source"], []any{2})
	add("code2wav has no sync_process_input_func", has(cw, "sync_process_input_func"), false)
	add("code2wav custom_process_input_func", cw["custom_process_input_func"], processorPrefix+"talker2code2wav")
	add("code2wav final_output_type", cw["final_output_type"], "audio")

	add("runtime.enabled", dig(cfg, "runtime", "enabled"), true)
	add("runtime.edges", dig(cfg, "runtime", "edges"), []any{
		map[string]any{"from": 0, "to": 1},
		map[string]any{"from": 1, "to": 2},
		map[string]any{"from": 2, "to": 3},
	})

	// The recipe's --deploy-config would load no stage from its own YAML;
	// the head runs stage 0 and the omni master, on loopback.
	head := []string{"--stage-id", "0", "--omni-master-address", "127.0.0.1", "--omni-master-port", "25203"}
	add("ServeArgs", res.ServeArgs, append([]string{"vllm", "serve", seedModel, "--omni", "--port", "8091", "--stage-configs-path", DefaultConfigPath}, head...))
	add("ServeCommand", res.ServeCommand, "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path "+DefaultConfigPath+" "+strings.Join(head, " "))
	add("Release", res.Release, "0.24.0")
	add("Version", res.Version, "0.24.0")
	add("Format", res.Format, "stage_args")
	add("Edges", res.Edges, []Edge{{From: 0, To: 1}, {From: 1, To: 2}, {From: 2, To: 3}})
	add("GPUCount", res.GPUCount, 3)
	var roles, kvRoles []string
	var boot []int
	for _, s := range res.Stages {
		roles = append(roles, s.Role)
		if s.KVRole != nil {
			kvRoles = append(kvRoles, *s.KVRole)
		}
		if s.BootstrapPort != nil {
			boot = append(boot, *s.BootstrapPort)
		}
	}
	add("stage roles", roles, []string{RolePrefill, RoleDecode, RoleStage, RoleStage})
	add("kv roles", kvRoles, []string{"kv_producer", "kv_consumer"})
	add("bootstrap ports", boot, []int{25201, 25202})
	var ports []string
	for _, p := range res.Ports {
		ports = append(ports, fmt.Sprintf("%s=%d", p.Name, p.Port))
	}
	add("ports", ports, []string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25202", "omni_master=25203"})
	add("launch count", len(res.Launches), 1)
	if len(res.Launches) == 1 {
		l := res.Launches[0]
		add("launch stage ids", l.StageIDs, []int{0, 1, 2, 3})
		add("launch ports", l.Ports, []int{8091, 25201, 25202, 25203})
		var roles, envs []string
		for _, proc := range l.Processes {
			roles = append(roles, fmt.Sprintf("%d:%s", *proc.StageID, proc.Role))
			envs = append(envs, proc.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"])
		}
		add("processes", roles, []string{"0:head", "1:headless", "2:headless", "3:headless"})
		add("process side channels", envs, []string{"25201", "25202", "", ""})
		add("head command", commandOf(l.Processes[0]), res.ServeCommand)
	}

	for _, f := range facts {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s = %#v, want %#v", f.what, f.got, f.want)
		}
	}
}

func keysOf(m map[string]any) []string { return sortedStrings(m) }

// seedBlocks returns the ```yaml blocks of the seed recipe, in order.
func seedBlocks(t *testing.T) []string {
	t.Helper()
	requireShared(t, seedRecipePath)
	b, err := os.ReadFile(seedRecipePath)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```yaml":
			in, cur = true, nil
		case in && strings.TrimSpace(l) == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, l)
		}
	}
	if len(blocks) < 3 {
		t.Fatalf("the seed recipe has %d yaml blocks, want 3", len(blocks))
	}
	return blocks
}

// recipeStageKeys are the keys a stage_args stage holds at its own level
// (reference section 1a); containerless lines that name one close every
// mapping opened inside the stage.
var recipeStageKeys = map[string]bool{
	"stage_id": true, "stage_type": true, "is_prefill_only": true, "is_decode_only": true,
	"runtime": true, "engine_args": true, "engine_input_source": true, "final_output": true,
	"final_output_type": true, "is_comprehension": true, "default_sampling_params": true,
	"custom_process_input_func": true, "sync_process_input_func": true,
	"input_connectors": true, "output_connectors": true,
}

// decodeRecipeStages reads a recipe block that lists stages. The stored
// copy of the recipe lost its indentation (and gained "|" lines), so when
// the block does not read as a stage list as it is, the nesting is rebuilt
// from the dialect's keys: a stage-level key returns to the stage, a key
// with no value opens a mapping, and any other key stays in the innermost
// open mapping.
func decodeRecipeStages(t *testing.T, block string) []any {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if s := strings.TrimSpace(l); s != "" && s != "|" {
			lines = append(lines, l)
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(lines[0]), "stage_args:") {
		lines = append([]string{"stage_args:"}, lines...)
	}
	var v map[string]any
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &v); err == nil {
		if list, ok := v["stage_args"].([]any); ok && wellFormedStages(list) {
			return list
		}
	}
	var out []string
	depth, keys := 0, 0
	for _, raw := range lines {
		l := strings.TrimSpace(raw)
		switch {
		case l == "stage_args:":
			out = append(out, l)
		case strings.HasPrefix(l, "- "):
			out = append(out, "  "+l)
			depth, keys = 0, keys+1
		default:
			key, val, _ := strings.Cut(l, ":")
			if recipeStageKeys[key] {
				depth = 0
			}
			out = append(out, strings.Repeat(" ", 4+2*depth)+l)
			keys++
			if strings.TrimSpace(val) == "" {
				depth++
			}
		}
	}
	if err := yaml.Unmarshal([]byte(strings.Join(out, "\n")), &v); err != nil {
		t.Fatalf("the rebuilt recipe block does not parse: %v\n%s", err, strings.Join(out, "\n"))
	}
	list, _ := v["stage_args"].([]any)
	if got := countKeys(list); got != keys {
		t.Fatalf("the rebuilt recipe block holds %d keys, the text has %d:\n%s", got, keys, strings.Join(out, "\n"))
	}
	return list
}

func wellFormedStages(list []any) bool {
	for _, s := range list {
		m, ok := s.(map[string]any)
		if !ok || !has(m, "stage_id") {
			return false
		}
		for k := range m {
			if !recipeStageKeys[k] {
				return false
			}
		}
	}
	return len(list) > 0
}

func countKeys(v any) int {
	n := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			n += countKeys(e)
		}
	case map[string]any:
		for _, e := range x {
			n += 1 + countKeys(e)
		}
	}
	return n
}

// withDeviations applies releases.SeedDeviations to recipe stages: where
// no release starts what the recipe writes, the plan follows the release.
func withDeviations(t *testing.T, stages []any) []any {
	t.Helper()
	for _, d := range releases.SeedDeviations {
		for _, s := range stages {
			m, _ := s.(map[string]any)
			if id, _ := m["stage_id"].(int); d.Stage < 0 || id != d.Stage {
				continue
			}
			for _, k := range d.Key[:len(d.Key)-1] {
				next, ok := m[k].(map[string]any)
				if !ok {
					next = map[string]any{}
					m[k] = next
				}
				m = next
			}
			last := d.Key[len(d.Key)-1]
			if !reflect.DeepEqual(m[last], d.Recipe) {
				t.Fatalf("deviation %v: the recipe has %#v, the table says %#v", d.Key, m[last], d.Recipe)
			}
			if d.Planned == nil {
				delete(m, last)
			} else {
				m[last] = d.Planned
			}
		}
	}
	return stages
}

// TestSeedThinkerBlock compares the recipe's section 1 (the prefill and
// decode stages, in full) with the planned stages 0 and 1, value for value,
// after the documented deviations.
func TestSeedThinkerBlock(t *testing.T) {
	want := withDeviations(t, decodeRecipeStages(t, seedBlocks(t)[0]))
	if len(want) != 2 {
		t.Fatalf("section 1 has %d stages, want 2", len(want))
	}
	got := stageList(t, config(t, mustPlan(t, Spec{Model: seedModel}).ConfigYAML))
	for i := 0; i < 2; i++ {
		if !reflect.DeepEqual(any(got[i]), want[i]) {
			t.Errorf("stage %d differs from the recipe:\n%s", i, mapDiff("", got[i], want[i]))
		}
	}
}

// TestSeedDownstreamBlock checks every setting section 2 of the recipe
// gives the talker and code2wav stages is in the planned config.
func TestSeedDownstreamBlock(t *testing.T) {
	want := withDeviations(t, decodeRecipeStages(t, seedBlocks(t)[1]))
	got := stageList(t, config(t, mustPlan(t, Spec{Model: seedModel}).ConfigYAML))
	if len(want) != 2 {
		t.Fatalf("section 2 has %d stages, want 2", len(want))
	}
	for _, w := range want {
		wm, ok := w.(map[string]any)
		if !ok {
			t.Fatalf("recipe stage is %T", w)
		}
		id, _ := wm["stage_id"].(int)
		if id >= len(got) {
			t.Fatalf("recipe stage %d is not planned", id)
		}
		if diff := subsetDiff("", got[id], wm); diff != "" {
			t.Errorf("stage %d lacks recipe settings:\n%s", id, diff)
		}
	}
}

// mapDiff lists the keys where two decoded values differ.
func mapDiff(prefix string, got, want any) string { return valueDiff(prefix, got, want, false) }

// subsetDiff lists what want holds that got does not.
func subsetDiff(prefix string, got, want any) string { return valueDiff(prefix, got, want, true) }

// valueDiff compares two decoded values key by key: every key of either,
// or with subset only want's keys.
func valueDiff(prefix string, got, want any, subset bool) string {
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if !gok || !wok {
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("  %s: got %#v, want %#v\n", prefix, got, want)
		}
		return ""
	}
	keys := wm
	if !subset {
		keys = union(gm, wm)
	}
	var b strings.Builder
	for _, k := range sortedStrings(keys) {
		b.WriteString(valueDiff(prefix+"."+k, gm[k], wm[k], subset))
	}
	return b.String()
}

func union(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// TestSeedLaunchLine compares the recipe's launch line with the plan's
// serve_command for the recipe's config path, after the documented change of
// flag.
func TestSeedLaunchLine(t *testing.T) {
	requireShared(t, seedRecipePath)
	b, err := os.ReadFile(seedRecipePath)
	if err != nil {
		t.Fatal(err)
	}
	// The stored copy lost its line structure ("|" lines, a backslash
	// continuation): read the words from `vllm serve` to the config file.
	text := string(b)
	i := strings.Index(text, "vllm serve ")
	j := strings.Index(text[max(i, 0):], ".yaml\n") + max(i, 0)
	if i < 0 || j < i {
		t.Fatal("the recipe has no launch line")
	}
	var words []string
	for _, w := range strings.Fields(text[i : j+len(".yaml")]) {
		if w != "|" && w != "\\" {
			words = append(words, w)
		}
	}
	recipe := strings.Join(words, " ")
	const path = "/path/to/qwen3_omni_pd.yaml"
	// The launch deviations: a word the plan replaces, or words it adds.
	want := recipe
	for _, d := range releases.SeedDeviations {
		if d.Stage >= 0 {
			continue
		}
		to, _ := d.Planned.(string)
		switch from, _ := d.Recipe.(string); {
		case from == "":
			want += " " + to
		case !strings.Contains(want, from):
			t.Fatalf("the recipe's launch line %q does not use %v", recipe, d.Recipe)
		default:
			want = strings.Replace(want, from, to, 1)
		}
	}
	if got := mustPlan(t, Spec{Model: seedModel, ConfigPath: path}).ServeCommand; got != want {
		t.Errorf("serve_command %q, want the recipe's %q with the launch deviations", got, want)
	}
}
