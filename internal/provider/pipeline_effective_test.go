package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestEffectiveObject is the rule for the nested computed inputs, after a
// plan (planned values known) and before one (planned nil): a computed
// field the configuration leaves null takes the planned value, or unknown;
// whatever the configuration sets, the dynamic fields included, is kept.
func TestEffectiveObject(t *testing.T) {
	for _, c := range effectiveObjectCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got, err := effectiveObject(c.input, c.config, c.planned)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

// effectiveObjectCase is a nested input's configuration, its planned
// values, and what it reads back.
type effectiveObjectCase struct {
	name    string
	input   string
	config  tftypes.Value
	planned map[string]tftypes.Value // nil: the plan is unknown
	want    tftypes.Value
}

// effectiveObjectCases are the cases of TestEffectiveObject.
func effectiveObjectCases(t *testing.T) []effectiveObjectCase {
	role := nestedInputTypes()["prefill"]
	conn := nestedInputTypes()["connector"]
	ranges := nestedInputTypes()["port_range"]
	devices := role.AttributeTypes["devices"]
	list := func(xs ...int64) tftypes.Value {
		elems := make([]tftypes.Value, len(xs))
		for i, x := range xs {
			elems[i] = tfNumber(x)
		}
		return tftypes.NewValue(devices, elems)
	}
	unknown := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) }
	null := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, nil) }
	dyn := func(attrs map[string]tftypes.Value) tftypes.Value {
		types := map[string]tftypes.Type{}
		for k, v := range attrs {
			types[k] = v.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, attrs)
	}
	engineArgs := dyn(map[string]tftypes.Value{"enforce_eager": tftypes.NewValue(tftypes.Bool, true)})
	obj := func(typ tftypes.Object, set map[string]tftypes.Value) tftypes.Value {
		return objectValue(t, typ, set)
	}
	planned := map[string]tftypes.Value{
		"devices":              list(0),
		"tensor_parallel_size": tfNumber(1),
		"max_num_seqs":         tfNumber(16),
		"bootstrap_port":       tfNumber(25201),
	}
	return []effectiveObjectCase{
		{
			name:    "computed fields unset, planned known",
			input:   "prefill",
			config:  obj(role, map[string]tftypes.Value{"host": tfStr("10.0.0.1")}),
			planned: planned,
			want: obj(role, map[string]tftypes.Value{
				"devices": list(0), "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(16),
				"bootstrap_port": tfNumber(25201), "host": tfStr("10.0.0.1"),
			}),
		},
		{
			name:  "fields set win over planned",
			input: "prefill",
			config: obj(role, map[string]tftypes.Value{
				"devices": list(3), "max_num_seqs": tfNumber(8), "gpu_memory_utilization": tfNumber(1),
			}),
			planned: planned,
			want: obj(role, map[string]tftypes.Value{
				"devices": list(3), "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(8),
				"bootstrap_port": tfNumber(25201), "gpu_memory_utilization": tfNumber(1),
			}),
		},
		{
			name:    "a field set to an unknown stays unknown",
			input:   "prefill",
			config:  obj(role, map[string]tftypes.Value{"max_num_seqs": unknown(tftypes.Number)}),
			planned: planned,
			want: obj(role, map[string]tftypes.Value{
				"devices": list(0), "tensor_parallel_size": tfNumber(1), "max_num_seqs": unknown(tftypes.Number),
				"bootstrap_port": tfNumber(25201),
			}),
		},
		{
			name:    "planned null stays null",
			input:   "decode",
			config:  null(role),
			planned: map[string]tftypes.Value{"devices": list(1), "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(64), "bootstrap_port": null(tftypes.Number)},
			want:    obj(role, map[string]tftypes.Value{"devices": list(1), "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(64)}),
		},
		{
			name:    "object null, planned known: only the computed fields set",
			input:   "prefill",
			config:  null(role),
			planned: planned,
			want:    obj(role, planned),
		},
		{
			name:    "object unknown, planned known: as null",
			input:   "connector",
			config:  unknown(conn),
			planned: map[string]tftypes.Value{"name": tfStr("NixlConnector")},
			want:    obj(conn, map[string]tftypes.Value{"name": tfStr("NixlConnector")}),
		},
		{
			name:    "port_range null, planned known",
			input:   "port_range",
			config:  null(ranges),
			planned: map[string]tftypes.Value{"first": tfNumber(25201), "last": tfNumber(25300)},
			want:    obj(ranges, map[string]tftypes.Value{"first": tfNumber(25201), "last": tfNumber(25300)}),
		},
		{
			name:   "object null, planned unknown: unknown as a whole",
			input:  "prefill",
			config: null(role),
			want:   unknown(role),
		},
		{
			name:   "object unknown, planned unknown",
			input:  "port_range",
			config: unknown(ranges),
			want:   unknown(ranges),
		},
		{
			name:   "attribute of a null configuration, planned unknown",
			input:  "connector",
			config: tftypes.Value{},
			want:   unknown(conn),
		},
		{
			name:   "planned unknown: unset computed fields unknown, the rest as written",
			input:  "prefill",
			config: obj(role, map[string]tftypes.Value{"max_num_seqs": tfNumber(8), "host": tfStr("10.0.0.1")}),
			want: obj(role, map[string]tftypes.Value{
				"devices": unknown(devices), "tensor_parallel_size": unknown(tftypes.Number), "max_num_seqs": tfNumber(8),
				"bootstrap_port": unknown(tftypes.Number), "host": tfStr("10.0.0.1"),
			}),
		},
		{
			name:   "port_range set, planned unknown: as written",
			input:  "port_range",
			config: obj(ranges, map[string]tftypes.Value{"first": tfNumber(30000), "last": tfNumber(30010)}),
			want:   obj(ranges, map[string]tftypes.Value{"first": tfNumber(30000), "last": tfNumber(30010)}),
		},
		{
			name:    "engine_args untouched, planned known",
			input:   "prefill",
			config:  obj(role, map[string]tftypes.Value{"engine_args": engineArgs}),
			planned: planned,
			want: obj(role, map[string]tftypes.Value{
				"devices": list(0), "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(16),
				"bootstrap_port": tfNumber(25201), "engine_args": engineArgs,
			}),
		},
		{
			name:   "engine_args untouched, planned unknown",
			input:  "decode",
			config: obj(role, map[string]tftypes.Value{"engine_args": engineArgs, "devices": list(1)}),
			want: obj(role, map[string]tftypes.Value{
				"devices": list(1), "tensor_parallel_size": unknown(tftypes.Number), "max_num_seqs": unknown(tftypes.Number),
				"bootstrap_port": unknown(tftypes.Number), "engine_args": engineArgs,
			}),
		},
		{
			// Null, not unknown: engine_args is no computed field.
			name:   "engine_args null stays null, planned unknown",
			input:  "prefill",
			config: obj(role, map[string]tftypes.Value{"devices": list(0), "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(16), "bootstrap_port": tfNumber(1)}),
			want:   obj(role, map[string]tftypes.Value{"devices": list(0), "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(16), "bootstrap_port": tfNumber(1)}),
		},
		{
			name:   "extra_config untouched, planned unknown",
			input:  "connector",
			config: obj(conn, map[string]tftypes.Value{"extra_config": engineArgs, "kv_both": tftypes.NewValue(tftypes.Bool, true)}),
			want: obj(conn, map[string]tftypes.Value{
				"name": unknown(tftypes.String), "extra_config": engineArgs, "kv_both": tftypes.NewValue(tftypes.Bool, true),
			}),
		},
	}
}

// effectiveObject refuses what no nested input can read back.
func TestEffectiveObject_Errors(t *testing.T) {
	role := nestedInputTypes()["prefill"]
	null := tftypes.NewValue(role, nil)
	devices := tftypes.NewValue(role.AttributeTypes["devices"], []tftypes.Value{tfNumber(0)})
	planned := map[string]tftypes.Value{"devices": devices, "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(16), "bootstrap_port": tfNumber(25201)}
	if _, err := effectiveObject("api_port", tftypes.NewValue(tftypes.Number, nil), planned); err == nil {
		t.Error("an input that is no nested object: no error")
	}
	if _, err := effectiveObject("prefill", null, map[string]tftypes.Value{"devices": devices}); err == nil {
		t.Error("a computed field without a planned value: no error")
	}
	wrong := map[string]tftypes.Value{"devices": tfNumber(0), "tensor_parallel_size": tfNumber(1), "max_num_seqs": tfNumber(16), "bootstrap_port": tfNumber(1)}
	if _, err := effectiveObject("prefill", null, wrong); err == nil {
		t.Error("a planned value of the wrong type: no error")
	}
}
