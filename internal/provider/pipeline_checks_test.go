package provider

import (
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"go.yaml.in/yaml/v3"
)

// Expectations shared by the data source and resource tests: what vllm-omni's
// PD recipe (shared/seed) says the pipeline for seedModel looks like, as the
// default release (0.24.0) runs it: the recipe's split, placement and graph,
// with NixlConnector for the recipe's MooncakeConnector (which fails every
// PD request) and each stage as its own process.

// seedOutputs maps output attributes to the value the recipe implies.
func seedOutputs() map[string]knownvalue.Check {
	i := knownvalue.Int64Exact
	ints := func(xs ...int64) knownvalue.Check {
		cs := make([]knownvalue.Check, len(xs))
		for k, x := range xs {
			cs[k] = i(x)
		}
		return knownvalue.ListExact(cs)
	}
	stage := func(id int64, role, modelStage string, devices, inputs knownvalue.Check, kvRole string, port int64) knownvalue.Check {
		kv, bp := knownvalue.Check(knownvalue.Null()), knownvalue.Check(knownvalue.Null())
		if kvRole != "" {
			kv, bp = knownvalue.StringExact(kvRole), i(port)
		}
		return knownvalue.ObjectExact(map[string]knownvalue.Check{
			"stage_id":             i(id),
			"role":                 knownvalue.StringExact(role),
			"model_stage":          knownvalue.StringExact(modelStage),
			"devices":              devices,
			"tensor_parallel_size": i(1),
			"inputs":               inputs,
			"kv_role":              kv,
			"bootstrap_port":       bp,
			"host":                 knownvalue.Null(),
		})
	}
	port := func(name string, n int64, stageID knownvalue.Check) knownvalue.Check {
		return knownvalue.ObjectExact(map[string]knownvalue.Check{
			"name": knownvalue.StringExact(name), "port": i(n),
			"stage_id": stageID, "host": knownvalue.Null(),
		})
	}
	edge := func(from, to int64) knownvalue.Check {
		return knownvalue.ObjectExact(map[string]knownvalue.Check{"from": i(from), "to": i(to)})
	}
	return map[string]knownvalue.Check{
		"stages": knownvalue.ListExact([]knownvalue.Check{
			stage(0, "prefill", "thinker", ints(0), ints(), "kv_producer", 25201),
			stage(1, "decode", "thinker", ints(1), ints(0), "kv_consumer", 25202),
			stage(2, "stage", "talker", ints(2), ints(1), "", 0),
			stage(3, "stage", "code2wav", ints(2), ints(2), "", 0),
		}),
		"edges": knownvalue.ListExact([]knownvalue.Check{edge(0, 1), edge(1, 2), edge(2, 3)}),
		// The PD pair's NIXL side channels come first in the range, then
		// the omni master the head serves for the stages' own processes.
		"ports": knownvalue.SetExact([]knownvalue.Check{
			port("api", 8091, knownvalue.Null()),
			port("prefill_side_channel", 25201, i(0)),
			port("decode_side_channel", 25202, i(1)),
			port("omni_master", 25203, knownvalue.Null()),
		}),
		"gpu_count": i(3),
		// 0.24.0 applies no stage's runtime.env in a whole-pipeline
		// process, so each stage runs as its own; serve_command is the
		// head's, stage 0's.
		"serve_command": knownvalue.StringRegexp(regexp.MustCompile(
			`^vllm serve ` + regexp.QuoteMeta(seedModel) + ` --omni --port 8091 --stage-configs-path /\S+\.yaml` +
				` --stage-id 0 --omni-master-address 127\.0\.0\.1 --omni-master-port 25203$`)),
		"serve_args": knownvalue.ListPartial(map[int]knownvalue.Check{
			0: knownvalue.StringExact("vllm"), 1: knownvalue.StringExact("serve"),
			2: knownvalue.StringExact(seedModel), 3: knownvalue.StringExact("--omni"),
			4: knownvalue.StringExact("--port"), 5: knownvalue.StringExact("8091"),
			6: knownvalue.StringExact("--stage-configs-path"),
			8: knownvalue.StringExact("--stage-id"), 9: knownvalue.StringExact("0"),
		}),
		"vllm_omni_release": knownvalue.StringExact("0.24.0"),
		// preset is unset: it reads back as the preset model names.
		"preset": knownvalue.StringExact("qwen3_omni_moe"),
		"launches": knownvalue.ListExact([]knownvalue.Check{knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"host":      knownvalue.StringExact("local"),
			"processes": knownvalue.ListSizeExact(4),
		})}),
		// One template every stage is an instance of, and the check script
		// it runs first.
		"systemd_unit": knownvalue.ObjectExact(map[string]knownvalue.Check{
			"path":    knownvalue.StringExact("/etc/systemd/system/vllm-omni-stage@.service"),
			"content": knownvalue.StringRegexp(regexp.MustCompile(`(?m)^ExecStart=/usr/bin/env python3 /usr/local/lib/vllm-omni/pd-check\.py preflight 0\.24\.0 release `)),
		}),
		"check_script_path": knownvalue.StringExact("/usr/local/lib/vllm-omni/pd-check.py"),
		"id":                knownvalue.StringRegexp(regexp.MustCompile(`^\S+$`)),
		"diagram":           knownvalue.StringRegexp(regexp.MustCompile(`(?s)^(flowchart|graph) .*0.*1.*2.*3`)),
	}
}

func seedStateChecks(addr string) []statecheck.StateCheck {
	var out []statecheck.StateCheck
	for name, c := range seedOutputs() {
		out = append(out, statecheck.ExpectKnownValue(addr, tfjsonpath.New(name), c))
	}
	return out
}

func seedPlanChecks(addr string) []plancheck.PlanCheck {
	var out []plancheck.PlanCheck
	for name, c := range seedOutputs() {
		out = append(out, plancheck.ExpectKnownValue(addr, tfjsonpath.New(name), c))
	}
	return out
}

// unknownOutputChecks: while an input is unknown, every output is.
func unknownOutputChecks(addr string) []plancheck.PlanCheck {
	var out []plancheck.PlanCheck
	for _, name := range pipelineOutputNames {
		out = append(out, plancheck.ExpectUnknownValue(addr, tfjsonpath.New(name)))
	}
	return out
}

// seedConfig is the subset of the recipe's YAML the tests compare.
type seedConfig struct {
	StageArgs []seedStage `yaml:"stage_args"`
	Runtime   struct {
		Edges []struct {
			From int `yaml:"from"`
			To   int `yaml:"to"`
		} `yaml:"edges"`
	} `yaml:"runtime"`
}

// seedStageWant is what the recipe says of one stage of the seed's config.
type seedStageWant struct {
	prefill, decode bool
	devices         string
	seqs            int
	modelStage      string
	inputs          []int
	kvRole          string
	kvRank, port    int
}

var seedStagesWanted = []seedStageWant{
	{true, false, "0", 16, "thinker", nil, "kv_producer", 0, 25201},
	{false, true, "1", 64, "thinker", []int{0}, "kv_consumer", 1, 25202},
	{false, false, "2", 64, "talker", []int{1}, "", 0, 0},
	{false, false, "2", 1, "code2wav", []int{2}, "", 0, 0},
}

// checkSeedStage compares stage i of the seed's config with the recipe's.
func checkSeedStage(i int, st seedStage, w seedStageWant) error {
	ea := st.EngineArgs
	switch {
	case st.StageID != i:
		return fmt.Errorf("stage_args[%d].stage_id = %d", i, st.StageID)
	case st.IsPrefillOnly != w.prefill || st.IsDecodeOnly != w.decode:
		return fmt.Errorf("stage %d: is_prefill_only=%v is_decode_only=%v", i, st.IsPrefillOnly, st.IsDecodeOnly)
	case fmt.Sprint(st.Runtime.Devices) != w.devices:
		return fmt.Errorf("stage %d: runtime.devices = %v, want %q", i, st.Runtime.Devices, w.devices)
	case ea.MaxNumSeqs != w.seqs:
		return fmt.Errorf("stage %d: max_num_seqs = %d, want %d", i, ea.MaxNumSeqs, w.seqs)
	case ea.ModelStage != w.modelStage:
		return fmt.Errorf("stage %d: model_stage = %q, want %q", i, ea.ModelStage, w.modelStage)
	case fmt.Sprint(st.EngineInputSource) != fmt.Sprint(w.inputs) && len(st.EngineInputSource)+len(w.inputs) > 0:
		return fmt.Errorf("stage %d: engine_input_source = %v, want %v", i, st.EngineInputSource, w.inputs)
	}
	return checkSeedStageKV(i, st, w)
}

// checkSeedStageKV compares a stage's KV transfer settings, on the PD pair
// only, with the recipe's.
func checkSeedStageKV(i int, st seedStage, w seedStageWant) error {
	kv := st.EngineArgs.KVTransferConfig
	if w.kvRole == "" {
		if kv != nil {
			return fmt.Errorf("stage %d: unexpected kv_transfer_config", i)
		}
		if len(st.Runtime.Env) != 0 {
			return fmt.Errorf("stage %d: unexpected runtime.env %v", i, st.Runtime.Env)
		}
		return nil
	}
	switch {
	case kv == nil:
		return fmt.Errorf("stage %d: no kv_transfer_config", i)
	case kv.KVConnector != "NixlConnector" || kv.KVRole != w.kvRole || kv.KVRank != w.kvRank || kv.KVParallelSize != 2 || len(kv.Extra) != 0:
		return fmt.Errorf("stage %d: kv_transfer_config = %+v", i, *kv)
	case st.Runtime.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"] != fmt.Sprint(w.port) || len(st.Runtime.Env) != 1:
		// NIXL reads its side channel from the environment, which
		// the stage's runtime.env (and its process's) carries.
		return fmt.Errorf("stage %d: runtime.env = %v, want VLLM_NIXL_SIDE_CHANNEL_PORT %d", i, st.Runtime.Env, w.port)
	case st.EngineArgs.TensorParallelSize != 1:
		return fmt.Errorf("stage %d: tensor_parallel_size = %d", i, st.EngineArgs.TensorParallelSize)
	}
	return nil
}

// seedStage is one of seedConfig's stages.
type seedStage struct {
	StageID       int  `yaml:"stage_id"`
	IsPrefillOnly bool `yaml:"is_prefill_only"`
	IsDecodeOnly  bool `yaml:"is_decode_only"`
	Runtime       struct {
		Devices any               `yaml:"devices"`
		Env     map[string]string `yaml:"env"`
	} `yaml:"runtime"`
	EngineArgs struct {
		MaxNumSeqs         int    `yaml:"max_num_seqs"`
		ModelStage         string `yaml:"model_stage"`
		TensorParallelSize int    `yaml:"tensor_parallel_size"`
		KVTransferConfig   *struct {
			KVConnector    string         `yaml:"kv_connector"`
			KVRole         string         `yaml:"kv_role"`
			KVRank         int            `yaml:"kv_rank"`
			KVParallelSize int            `yaml:"kv_parallel_size"`
			Extra          map[string]any `yaml:"kv_connector_extra_config"`
		} `yaml:"kv_transfer_config"`
	} `yaml:"engine_args"`
	EngineInputSource []int `yaml:"engine_input_source"`
}

// checkSeedConfigYAML parses config_yaml and compares it with the recipe:
// the split, placement, connector and graph, field by field.
func checkSeedConfigYAML(addr string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		var doc seedConfig
		if err := yaml.Unmarshal([]byte(rs.Primary.Attributes["config_yaml"]), &doc); err != nil {
			return fmt.Errorf("config_yaml is not YAML: %w", err)
		}
		if len(doc.StageArgs) != len(seedStagesWanted) {
			return fmt.Errorf("config_yaml has %d stage_args, want %d", len(doc.StageArgs), len(seedStagesWanted))
		}
		for i, w := range seedStagesWanted {
			if err := checkSeedStage(i, doc.StageArgs[i], w); err != nil {
				return err
			}
		}
		if got := fmt.Sprint(doc.Runtime.Edges); got != "[{0 1} {1 2} {2 3}]" {
			return fmt.Errorf("runtime.edges = %s, want 0→1→2→3", got)
		}
		return nil
	}
}
