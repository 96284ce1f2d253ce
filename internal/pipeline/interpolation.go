package pipeline

import (
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// Strings from Terraform that the plan writes into a stage's engine
// settings (engine_args, the connector's extra_config and device_name) can
// hold `${`, which OmegaConf reads as an interpolation: ${oc.env:NAME} would
// read the machine's environment into the config. Escaping (`\${`) holds
// for one resolution only, and vllm-omni resolves these values more than
// once, and not the same number of times in every release and process:
//   - the stage_args loader resolves the file's engine_args when it merges
//     them (merge_configs: to_container(resolve=True)) and wraps the result
//     in OmegaConf again (entrypoints/utils.py@7f2b1e93:435-449,
//     @2ce15ab7:472-486; config/yaml_util.py@2ce15ab7:52);
//   - the deploy loader resolves the whole file (to_dict, stage_config.py
//     @2ce15ab7:641) and wraps each stage's engine_args again
//     (stage_config.py@7f2b1e93:892, @2ce15ab7:1062);
//   - the stage's engine arguments are read from that wrapper, resolving
//     again (engine/stage_init_utils.py@7f2b1e93:403, @2ce15ab7:964);
//   - a headless process sends its stage's config to the head resolved
//     (engine/stage_engine_startup.py@2ce15ab7:62-68,739), and in 0.20.0
//     the head wraps it once more (engine/async_omni_engine.py@7f2b1e93:505).
// So such a value is refused, naming the attribute. `pipeline:` is read
// once (stageconfig's loaderStrNode) and is escaped instead; a base config's
// own interpolations are the user's and are kept as written (lintBase).

// checkNoInterpolation refuses every string in v, at any depth, that holds
// `${`, at its own path below path.
func checkNoInterpolation(ds *Diagnostics, path Path, v any) {
	switch x := v.(type) {
	case string:
		if at := strings.Index(x, "${"); at >= 0 {
			ds.errorf(diagcode.EngineArgsInterpolation, path, "the value holds ${, which vllm-omni reads as an OmegaConf interpolation",
				"%q holds %q: vllm-omni resolves engine settings with OmegaConf more than once (when it loads the file, when it merges each stage's engine_args, and again when a headless stage hands its config to the head), so ${...} would be read as an interpolation (${oc.env:NAME} reads the machine's environment) and no escaping reads back as written. Remove the ${; an interpolation you mean belongs in base_config, where it is kept as written.",
				x, x[at:min(len(x), at+20)])
		}
	case []any:
		for i, e := range x {
			checkNoInterpolation(ds, path.Index(i), e)
		}
	case map[string]any:
		for _, k := range sortedStrings(x) {
			checkNoInterpolation(ds, path.Attr(k), x[k])
		}
	}
}
