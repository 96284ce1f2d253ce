package pipeline

import (
	"testing"
)

// readGraph refuses a base config whose stage ids, inputs or edges cannot
// be read.
func TestReadGraphDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"duplicate stage ids", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "  - stage_id: 1\n", "  - stage_id: 0\n")}
		}, "stage_id_duplicate", "base_config"},
		{"missing stage id", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "  - stage_id: 2\n    engine_args", "  - engine_args")}
		}, "stage_id_missing", "base_config"},
		{"inputs not a list", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "engine_input_source: [1]", "engine_input_source: 1")}
		}, "stage_inputs_invalid", "base_config"},
		{"edge without to", func(*testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBase + "runtime:\n  edges:\n    - from: 0\n"}
		}, "edges_invalid", "base_config"},
	})
}
