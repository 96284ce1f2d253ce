package stageconfig

import (
	"fmt"
	"math"
	"sort"

	"go.yaml.in/yaml/v3"
)

// valueNode builds a node tree from a plain Go value: nil, bool, string,
// Quoted, int, int64, float64, []any, Map or map[string]any. A Map keeps
// its order; a map[string]any's keys are written in sorted order so that
// equal values give equal YAML; lists of scalars are
// written in flow style, as vllm-omni's configs write them ([2150]).
func valueNode(v any) (*yaml.Node, error) {
	switch x := v.(type) {
	case nil:
		return nullNode(), nil
	case bool:
		return boolNode(x), nil
	case string:
		return strNode(x), nil
	case Quoted:
		return quotedStrNode(string(x)), nil
	case int:
		return intNode(x), nil
	case int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagInt, Value: fmt.Sprint(x)}, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a finite number", x)
		}
		return floatNode(x), nil
	case []any:
		seq := newSeq()
		flow := true
		for _, e := range x {
			n, err := valueNode(e)
			if err != nil {
				return nil, err
			}
			if n.Kind != yaml.ScalarNode {
				flow = false
			}
			seq.Content = append(seq.Content, n)
		}
		if flow && len(x) > 0 {
			seq.Style = yaml.FlowStyle
		}
		return seq, nil
	case Map:
		m := newMap()
		for _, e := range x {
			n, err := valueNode(e.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", e.Key, err)
			}
			m.Content = append(m.Content, keyNode(e.Key), n)
		}
		return m, nil
	case map[string]any:
		m := newMap()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n, err := valueNode(x[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			m.Content = append(m.Content, keyNode(k), n)
		}
		return m, nil
	}
	return nil, fmt.Errorf("values of type %T cannot be written to YAML", v)
}

// mergeValue merges a plain Go value into the node stored under key in m:
// maps merge key by key (recursively, new keys appended in sorted order),
// anything else replaces the stored value.
func mergeValue(m *yaml.Node, key string, v any) error {
	if sub, ok := v.(map[string]any); ok {
		if cur := resolve(mapGet(m, key)); cur != nil && cur.Kind == yaml.MappingNode {
			keys := make([]string, 0, len(sub))
			for k := range sub {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if err := mergeValue(cur, k, sub[k]); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
			}
			return nil
		}
	}
	n, err := valueNode(v)
	if err != nil {
		return err
	}
	mapSet(m, key, n)
	return nil
}

// Quoted is a string written in double quotes, as the recipes write
// connector names, roles and addresses.
type Quoted string

// KV is one key and its plain Go value, for building mappings in a fixed
// order.
type KV struct {
	Key   string
	Value any
}

// Map is a mapping written in the order of its entries.
type Map []KV

// CheckValue reports whether valueNode can write v, and if not, why.
func CheckValue(v any) error {
	_, err := valueNode(v)
	return err
}
