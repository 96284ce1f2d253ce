package stageconfig

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Stage is a view of one stage's mapping node. It knows where each dialect
// keeps a setting, so callers read and write settings without caring which
// dialect the document is in.
type Stage struct {
	node    *yaml.Node
	Dialect Dialect
	Index   int // position in the stage list
}

// Keys a stage holds at its own level in the `stage_args` dialect; in the
// `stages` dialect every key that is not reserved is an engine setting.
var stagesReservedKeys = map[string]bool{
	"stage_id": true, "devices": true, "num_replicas": true, "env": true,
	"async_chunk": true, "input_connectors": true, "output_connectors": true,
	"default_sampling_params": true, "default_pooling_params": true,
	"engine_extras": true, "engine_args": true, "runtime": true,
}

// isEngineKey reports whether a flat key of a `stages`-dialect stage is an
// engine setting.
func isEngineKey(key string) bool { return !stagesReservedKeys[key] }

// ID returns the stage's `stage_id`.
func (s Stage) ID() (int, bool) { return scalarInt(mapGet(s.node, "stage_id")) }

// get returns a stage-level key.
func (s Stage) get(key string) *yaml.Node { return resolve(mapGet(s.node, key)) }

// engineArgs returns the nested `engine_args:` mapping, or nil.
func (s Stage) engineArgs() *yaml.Node {
	n := resolve(mapGet(s.node, "engine_args"))
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

// engine returns an engine setting: under `engine_args:` in the
// `stage_args` dialect; flat on the stage in the `stages` dialect, where a
// nested `engine_args:` is still read as a fallback.
func (s Stage) engine(key string) *yaml.Node {
	if s.Dialect == Stages {
		if v := mapGet(s.node, key); v != nil {
			return resolve(v)
		}
	}
	return resolve(mapGet(s.engineArgs(), key))
}

// setEngine writes an engine setting where the dialect keeps it. In the
// `stages` dialect a key already nested under `engine_args:` is updated
// there so that it is not written twice.
func (s Stage) setEngine(key string, v *yaml.Node) {
	if s.Dialect == Stages {
		if ea := s.engineArgs(); ea != nil && mapGet(ea, key) != nil && mapGet(s.node, key) == nil {
			mapSet(ea, key, v)
			return
		}
		mapInsertBefore(s.node, key, v, "default_sampling_params", "input_connectors", "output_connectors")
		return
	}
	mapSet(s.ensureEngineArgs(), key, v)
}

// ensureEngineArgs returns `engine_args:`, creating it after `runtime:` (or
// the stage id) when absent.
func (s Stage) ensureEngineArgs() *yaml.Node {
	if ea := s.engineArgs(); ea != nil {
		return ea
	}
	ea := newMap()
	mapInsertAfter(s.node, "engine_args", ea, "runtime", "stage_type", "stage_id")
	return ea
}

// ModelStage returns the `model_stage` name (thinker, talker, ...), or "".
func (s Stage) ModelStage() string {
	v, _ := scalarString(s.engine("model_stage"))
	return v
}

// WorkerType returns `worker_type`, reading the older `worker_cls` spelling
// too, or "".
func (s Stage) WorkerType() string {
	if v, ok := scalarString(s.engine("worker_type")); ok {
		return v
	}
	v, _ := scalarString(s.engine("worker_cls"))
	return v
}

// StageType returns `stage_type`, which defaults to llm.
func (s Stage) StageType() string {
	if v, ok := scalarString(s.get("stage_type")); ok {
		return v
	}
	return "llm"
}

// Inputs returns `engine_input_source`. ok is false when the key is absent;
// malformed entries are reported through err.
func (s Stage) Inputs() (ids []int, ok bool, err error) {
	n := s.get("engine_input_source")
	if n == nil {
		return nil, false, nil
	}
	if n.Kind == yaml.ScalarNode && n.Tag == tagNull {
		return nil, true, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, true, errAt(n, "engine_input_source must be a list of stage ids: write it as [0], or [0, 1] for several")
	}
	ids = make([]int, 0, len(n.Content))
	for _, c := range n.Content {
		v, isInt := scalarInt(c)
		if !isInt {
			return nil, true, errAt(c, "engine_input_source entry %q is not a stage id (a whole number)", c.Value)
		}
		ids = append(ids, v)
	}
	return ids, true, nil
}

// ConnectorStages reads the stage ids named by `input_connectors`
// (`from_stage_<n>`) or `output_connectors` (`to_stage_<n>`) keys.
func (s Stage) ConnectorStages(key, prefix string) []int {
	m := s.get(key)
	var ids []int
	for _, k := range mapKeys(m) {
		if id, ok := ConnectorStageID(k, prefix); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// ConnectorStageID reads the stage id out of a connector key such as
// from_stage_2 (prefix "from_stage_"); ok is false for any other key.
func ConnectorStageID(key, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	return id, err == nil && id >= 0
}

// devicesNode returns the node holding the device list and whether it sits
// under `runtime:`.
func (s Stage) devicesNode() *yaml.Node {
	if s.Dialect == Stages {
		if n := s.get("devices"); n != nil {
			return n
		}
	}
	return resolve(mapGet(resolve(mapGet(s.node, "runtime")), "devices"))
}

// Devices returns the device indices the stage runs on. ok is false when no
// device list is set.
func (s Stage) Devices() (devs []int, ok bool, err error) {
	n := s.devicesNode()
	if n == nil {
		return nil, false, nil
	}
	devs, err = parseDevices(n)
	return devs, true, err
}

// parseDevices reads a device list written as "0,1", 0 or [0, 1].
func parseDevices(n *yaml.Node) ([]int, error) {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.TrimSpace(n.Value) == "" {
			return nil, errAt(n, "devices is empty: list device indices such as \"0,1\"")
		}
		devs := make([]int, 0, strings.Count(n.Value, ",")+1)
		for rest := n.Value; ; {
			part, tail, more := strings.Cut(rest, ",")
			d, err := deviceIndex(n, part)
			if err != nil {
				return nil, err
			}
			devs = append(devs, d)
			if !more {
				return devs, nil
			}
			rest = tail
		}
	case yaml.SequenceNode:
		devs := make([]int, 0, len(n.Content))
		for _, c := range n.Content {
			d, err := deviceIndex(n, resolve(c).Value)
			if err != nil {
				return nil, err
			}
			devs = append(devs, d)
		}
		return devs, nil
	}
	return nil, errAt(n, "devices must be a comma-separated string such as \"0,1\"")
}

// deviceIndex reads one GPU index of a device list.
func deviceIndex(list *yaml.Node, s string) (int, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, errAt(list, "device %q is not a GPU index (a whole number from 0)", s)
	}
	return v, nil
}

// FormatDevices writes device indices the way vllm-omni's configs do: "0,1".
func FormatDevices(devs []int) string {
	var b strings.Builder
	for i, d := range devs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	return b.String()
}

// SetDevices writes the device list where the dialect keeps it, keeping an
// existing key's position and comments.
func (s Stage) SetDevices(devs []int) {
	v := quotedStrNode(FormatDevices(devs))
	if s.Dialect == Stages && mapGet(resolve(mapGet(s.node, "runtime")), "devices") == nil {
		mapInsertAfter(s.node, "devices", v, "stage_id")
		return
	}
	mapSet(s.ensureRuntime(), "devices", v)
}

// ensureRuntime returns `runtime:`, creating it after the stage's identity
// keys when absent.
func (s Stage) ensureRuntime() *yaml.Node {
	if rt := resolve(mapGet(s.node, "runtime")); rt != nil && rt.Kind == yaml.MappingNode {
		return rt
	}
	rt := newMap()
	mapInsertAfter(s.node, "runtime", rt, "is_decode_only", "is_prefill_only", "stage_type", "stage_id")
	return rt
}

// env returns the stage's environment mapping for reading, or nil.
func (s Stage) env() *yaml.Node {
	if s.Dialect == Stages {
		if n := s.get("env"); n != nil {
			return n
		}
	}
	return resolve(mapGet(resolve(mapGet(s.node, "runtime")), "env"))
}

// SetEnv sets one environment variable for the stage's processes.
func (s Stage) SetEnv(name, value string) {
	var env *yaml.Node
	if s.Dialect == Stages {
		env = mapGet(s.node, "env")
		if env == nil {
			env = newMap()
			mapInsertAfter(s.node, "env", env, "devices", "stage_id")
		}
	} else {
		env = mapEnsure(s.ensureRuntime(), "env")
	}
	mapSet(env, name, quotedStrNode(value))
}

// Describe names the stage for messages: "stage 2 (talker)".
func (s Stage) Describe() string {
	id, ok := s.ID()
	name := s.ModelStage()
	switch {
	case ok && name != "":
		return fmt.Sprintf("stage %d (%s)", id, name)
	case ok:
		return fmt.Sprintf("stage %d", id)
	case name != "":
		return fmt.Sprintf("stage #%d (%s)", s.Index+1, name)
	}
	return fmt.Sprintf("stage #%d", s.Index+1)
}

// MergeEngine merges a plain Go value into an engine setting: a map merges
// key by key into an existing mapping, anything else replaces the setting.
func (s Stage) MergeEngine(key string, v any) error {
	if s.Dialect == Stages {
		if ea := s.engineArgs(); ea != nil && mapGet(ea, key) != nil && mapGet(s.node, key) == nil {
			return mergeValue(ea, key, v)
		}
		if mapGet(s.node, key) == nil {
			n, err := valueNode(v)
			if err != nil {
				return err
			}
			s.setEngine(key, n)
			return nil
		}
		return mergeValue(s.node, key, v)
	}
	return mergeValue(s.ensureEngineArgs(), key, v)
}

// SetMaxNumSeqs writes the stage's batch limit where the config keeps it:
// `max_num_seqs` in the engine settings, or the legacy
// `runtime.max_batch_size` when only that is present (both when both are,
// so they cannot disagree).
func (s Stage) SetMaxNumSeqs(v int) {
	rt := resolve(mapGet(s.node, "runtime"))
	legacy := mapGet(rt, "max_batch_size") != nil
	if legacy {
		mapSet(rt, "max_batch_size", intNode(v))
	}
	if !legacy || s.engine("max_num_seqs") != nil {
		s.setEngine("max_num_seqs", intNode(v))
	}
}

// maxNumSeqs reads the stage's batch limit from either spelling.
func (s Stage) maxNumSeqs() (int, bool) {
	if v, ok := scalarInt(s.engine("max_num_seqs")); ok {
		return v, true
	}
	return scalarInt(mapGet(resolve(mapGet(s.node, "runtime")), "max_batch_size"))
}

// NumReplicas reads how many copies of the stage run (1 when unset).
func (s Stage) NumReplicas() int {
	n := s.get("num_replicas")
	if n == nil {
		n = resolve(mapGet(resolve(mapGet(s.node, "runtime")), "num_replicas"))
	}
	if v, ok := scalarInt(n); ok && v > 0 {
		return v
	}
	return 1
}

// SetNumReplicas writes num_replicas where the dialect keeps it.
func (s Stage) SetNumReplicas(v int) {
	if s.Dialect == Stages && mapGet(resolve(mapGet(s.node, "runtime")), "num_replicas") == nil {
		mapInsertAfter(s.node, "num_replicas", intNode(v), "devices", "stage_id")
		return
	}
	mapSet(s.ensureRuntime(), "num_replicas", intNode(v))
}
