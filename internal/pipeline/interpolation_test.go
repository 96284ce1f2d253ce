package pipeline

import (
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// TestTerraformInterpolationsRefused: a `${` in a string that the plan
// writes into a stage's engine settings is an error at that string's own
// attribute path, wherever it stands; text that OmegaConf does not read as
// an interpolation is planned.
func TestTerraformInterpolationsRefused(t *testing.T) {
	const env = "${oc.env:HOME}"
	rdma := ConnectorSpec{Name: connectorMooncake, Protocol: "rdma", ExtraConfig: map[string]any{"mooncake_bootstrap_port": int64(25300)}}
	withDevice := rdma
	withDevice.DeviceName = "mlx5_" + env
	for _, c := range []struct {
		name string
		spec Spec
		path string // "" for a plan without this error
	}{
		{"prefill engine_args", Spec{Prefill: RoleSpec{EngineArgs: map[string]any{"chat_template": "x" + env}}}, "prefill.engine_args.chat_template"},
		{"decode engine_args", Spec{Decode: RoleSpec{EngineArgs: map[string]any{"served_model_name": env}}}, "decode.engine_args.served_model_name"},
		{"in a list", Spec{Prefill: RoleSpec{EngineArgs: map[string]any{"stop": []any{"a", "${x}"}}}}, "prefill.engine_args.stop[1]"},
		{"in an object", Spec{Decode: RoleSpec{EngineArgs: map[string]any{"hf_overrides": map[string]any{"a": map[string]any{"b": "${y}"}}}}}, "decode.engine_args.hf_overrides.a.b"},
		{"escaped already", Spec{Prefill: RoleSpec{EngineArgs: map[string]any{"x": `\${x}`}}}, "prefill.engine_args.x"},
		{"unclosed", Spec{Prefill: RoleSpec{EngineArgs: map[string]any{"x": "${x"}}}, "prefill.engine_args.x"},
		{"stage override", Spec{StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"y": env}}}}, "stage_overrides.talker.engine_args.y"},
		{"connector extra_config", Spec{Connector: ConnectorSpec{ExtraConfig: map[string]any{"backends": []any{"UCX", env}}}}, "connector.extra_config.backends[1]"},
		{"connector device_name", Spec{Connector: withDevice}, "connector.device_name"},
		{"a dollar alone", Spec{Prefill: RoleSpec{EngineArgs: map[string]any{"x": "$HOME $ {x} {y}$"}}}, ""},
		{"a key", Spec{Prefill: RoleSpec{EngineArgs: map[string]any{"${k}": "v"}}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := c.spec
			spec.Model = seedModel
			if spec.StageOverrides != nil {
				// Through the same decoding as the provider's.
				raw := map[string]any{}
				for k, o := range spec.StageOverrides {
					raw[k] = map[string]any{"engine_args": o.EngineArgs}
				}
				var ds Diagnostics
				spec.StageOverrides, ds = DecodeStageOverrides(raw)
				if c.path != "" && !hasCode(ds, "engine_args_interpolation", c.path) {
					t.Fatalf("no engine_args_interpolation at %s:\n%s", c.path, describeDiags(ds))
				}
				return
			}
			res, ds := Plan(spec)
			if c.path == "" {
				if res == nil || hasCodeAny(ds, "engine_args_interpolation") {
					t.Fatalf("refused:\n%s", describeDiags(ds))
				}
				return
			}
			if res != nil || !hasCode(ds, "engine_args_interpolation", c.path) {
				t.Fatalf("no engine_args_interpolation at %s:\n%s", c.path, describeDiags(ds))
			}
			if got := codesOf(ds, "engine_args_interpolation"); len(got) != 1 || !strings.Contains(got[0].Detail, "base_config") {
				t.Errorf("want one error that says where an interpolation belongs: %v", got)
			}
		})
	}
}

// TestPipelineKeyReadsBackAsWritten: `pipeline` is read by the deploy
// loader, resolved once; whatever it holds reads back as written, never
// as an interpolation.
func TestPipelineKeyReadsBackAsWritten(t *testing.T) {
	py := testtool.Python(t, "omegaconf")
	for _, key := range []string{"qwen3_omni_pd", "my${oc.env:HOME}pd", `a\${b}`, `a\\${b}c`, "${x", "$${y}}", `\`} {
		res, ds := Plan(Spec{Model: seedModel, Format: "stages", Pipeline: key})
		if res == nil {
			t.Fatalf("%q: not planned:\n%s", key, describeDiags(ds))
		}
		got := pythonJSON(t, py, "OmegaConf", `import sys, json, io
from omegaconf import OmegaConf
json.dump(OmegaConf.to_container(OmegaConf.load(io.StringIO(sys.stdin.read())), resolve=True)["pipeline"], sys.stdout)`, res.ConfigYAML)
		if got != key {
			t.Errorf("pipeline %q reads back as %q:\n%s", key, got, strings.SplitN(res.ConfigYAML, "\n", 2)[0])
		}
	}
}
