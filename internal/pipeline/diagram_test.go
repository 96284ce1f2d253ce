package pipeline

import (
	"strings"
	"testing"
)

// The diagram draws one box per stage with its role, GPUs and host, and
// labels the prefill → decode edge with the connector.
func TestDiagram(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		lines []string // each a whole line of the diagram
	}{
		{"seed", Spec{Model: seedModel}, []string{
			"flowchart LR",
			`  s0["0: thinker (prefill)<br/>GPU 0"]`,
			`  s1["1: thinker (decode)<br/>GPU 1"]`,
			`  s2["2: talker<br/>GPU 2"]`,
			`  s3["3: code2wav<br/>GPU 2"]`,
			`  s0 -- "KV: NixlConnector" --> s1`,
			"  s1 --> s2",
			"  s2 --> s3",
		}},
		{"connector named on the KV edge", Spec{Model: seedModel, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{
			"connectors": []any{map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}}}, []string{
			`  s0 -- "KV: MultiConnector" --> s1`,
		}},
		{"hosts in the labels", Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}, []string{
			`  s0["0: thinker (prefill)<br/>GPU 0 @ 10.0.0.1"]`,
			`  s1["1: thinker (decode)<br/>GPU 0 @ 10.0.0.2"]`,
		}},
		{"TP spans GPUs", Spec{Model: seedModel, Prefill: RoleSpec{TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)}}, []string{
			`  s0["0: thinker (prefill)<br/>GPU 0,1"]`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := mustPlan(t, tc.spec).Diagram
			have := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
				have[l] = true
			}
			for _, l := range tc.lines {
				if !have[l] {
					t.Errorf("no line %q in:\n%s", l, d)
				}
			}
		})
	}
}

// mermaidEscape keeps user text inside a label's quotes.
func TestMermaidEscape(t *testing.T) {
	for in, want := range map[string]string{
		`thinker`:     `thinker`,
		`a"b`:         `a#quot;b`,
		`<script>`:    `#lt;script#gt;`,
		`x<br/>y`:     `x<br/>y`,
		`"]; s9["hi"`: `#quot;]; s9[#quot;hi#quot;`,
	} {
		if got := mermaidEscape(in); got != want {
			t.Errorf("mermaidEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
