package pipeline

import (
	"fmt"
	"math"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// DecodeStageOverrides reads the free-form `stage_overrides` value (an
// object keyed by model_stage name) into typed overrides, reporting every
// shape problem at the entry's attribute path. v is nil, or a map[string]any
// whose values are maps with the keys devices, max_num_seqs,
// gpu_memory_utilization, host and engine_args.
func DecodeStageOverrides(v any) (map[string]StageOverride, Diagnostics) {
	var ds Diagnostics
	root := AttrPath("stage_overrides")
	if v == nil {
		return nil, nil
	}
	entries, ok := v.(map[string]any)
	if !ok {
		ds.errorf(diagcode.StageOverridesShape, root, "stage_overrides must be an object keyed by model_stage",
			"write stage_overrides = { talker = { devices = [2] } }; got %s.", describeType(v))
		return nil, ds
	}
	out := make(map[string]StageOverride, len(entries))
	for _, name := range sortedStrings(entries) {
		path := root.Attr(name)
		if entries[name] == nil {
			continue // talker = null: no override, as for any unset argument
		}
		fields, ok := entries[name].(map[string]any)
		if !ok {
			ds.errorf(diagcode.StageOverridesShape, path, "a stage override must be an object",
				"write %s = { max_num_seqs = 8 }; got %s.", name, describeType(entries[name]))
			continue
		}
		var o StageOverride
		for _, key := range sortedStrings(fields) {
			val := fields[key]
			fpath := path.Attr(key)
			if val == nil {
				continue
			}
			switch key {
			case "devices":
				o.Devices = decodeIntList(&ds, fpath, val)
				checkDevices(&ds, fpath, o.Devices)
			case "max_num_seqs":
				if n, ok := decodeInt(&ds, fpath, val); ok {
					if n < 1 {
						ds.errorf(diagcode.MaxNumSeqsRange, fpath, "max_num_seqs must be at least 1", "it is %d; set 1 or more.", n)
					}
					o.MaxNumSeqs = &n
				}
			case "gpu_memory_utilization":
				if f, ok := decodeFloat(&ds, fpath, val); ok {
					o.GPUMemoryUtilization = &f
					checkMemory(&ds, path, o.GPUMemoryUtilization)
				}
			case "num_replicas":
				if n, ok := decodeInt(&ds, fpath, val); ok {
					if n < 1 {
						ds.errorf(diagcode.NumReplicasRange, fpath, "num_replicas must be at least 1", "it is %d; set 1 or more.", n)
					}
					o.NumReplicas = &n
				}
			case "host":
				if s, ok := val.(string); ok {
					o.Host = s // checked with the other hosts, in layout
				} else {
					ds.errorf(diagcode.StageOverridesType, fpath, "host must be a string", "got %s; write an address such as \"10.0.0.3\".", describeType(val))
				}
			case "engine_args":
				if m, ok := val.(map[string]any); ok {
					o.EngineArgs = m
					checkEngineArgs(&ds, fpath, m, overrideManagedKeys)
				} else {
					ds.errorf(diagcode.StageOverridesType, fpath, "engine_args must be an object", "got %s; write an object such as { max_model_len = 4096 }.", describeType(val))
				}
			default:
				ds.errorf(diagcode.StageOverridesUnknownKey, fpath, "unknown stage override setting",
					"%q is not a stage override setting; use devices, max_num_seqs, gpu_memory_utilization, num_replicas, host or engine_args (other engine settings go in engine_args).", key)
			}
		}
		out[name] = o
	}
	return out, ds
}

// decodeInt reads a whole number within ±MaxWhole, the bounds of the typed
// attributes; each setting checks its own lower bound.
func decodeInt(ds *Diagnostics, path Path, v any) (int, bool) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int:
		n = int64(x)
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) {
			ds.errorf(diagcode.StageOverridesType, path, "must be a whole number", "got %s; write a whole number such as 8.", describeType(v))
			return 0, false
		}
		if math.Abs(x) > MaxWhole {
			ds.errorf(diagcode.StageOverridesRange, path, "the number is too large", "got %g; write a whole number of at most %d.", x, MaxWhole)
			return 0, false
		}
		n = int64(x)
	default:
		ds.errorf(diagcode.StageOverridesType, path, "must be a whole number", "got %s; write a whole number such as 8.", describeType(v))
		return 0, false
	}
	if n > MaxWhole || n < -MaxWhole {
		ds.errorf(diagcode.StageOverridesRange, path, "the number is too large", "got %d; write a whole number of at most %d.", n, MaxWhole)
		return 0, false
	}
	return int(n), true
}

func decodeFloat(ds *Diagnostics, path Path, v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	ds.errorf(diagcode.StageOverridesType, path, "must be a number", "got %s; write a number such as 0.5.", describeType(v))
	return 0, false
}

func decodeIntList(ds *Diagnostics, path Path, v any) []int {
	list, ok := v.([]any)
	if !ok {
		ds.errorf(diagcode.StageOverridesType, path, "must be a list of GPU indices", "write devices = [2]; got %s.", describeType(v))
		return nil
	}
	// One unreadable index leaves the whole list unset, so that the rest of
	// the plan does not report a shorter list as a problem of its own.
	out := make([]int, 0, len(list))
	complete := true
	for i, e := range list {
		n, ok := decodeInt(ds, path.Index(i), e)
		if ok {
			out = append(out, n)
		}
		complete = complete && ok
	}
	if !complete {
		return nil
	}
	return out
}

func describeType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the bool %t", x)
	case int64, int, float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
