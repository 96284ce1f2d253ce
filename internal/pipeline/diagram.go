package pipeline

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// diagram draws the planned stages and their edges as a Mermaid
// flowchart: one box per stage with its role and GPUs, the KV hand-off
// labelled with the connector.
func diagram(planned stageLayout, edges []Edge, connector string) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, s := range planned.stages {
		name := s.base.modelStage
		if name == "" {
			name = s.key
		}
		label := fmt.Sprintf("%d: %s", s.id, name)
		if s.role != RoleStage {
			label += " (" + s.role + ")"
		}
		label += "<br/>GPU " + stageconfig.FormatDevices(s.devices) + describeHost(s.host)
		fmt.Fprintf(&b, "  s%d[\"%s\"]\n", s.id, mermaidEscape(label))
	}
	pre, dec := planned.pdPair()
	for _, e := range edges {
		if e.From == pre.id && e.To == dec.id {
			fmt.Fprintf(&b, "  s%d -- \"KV: %s\" --> s%d\n", e.From, mermaidEscape(connector), e.To)
			continue
		}
		fmt.Fprintf(&b, "  s%d --> s%d\n", e.From, e.To)
	}
	return b.String()
}

// mermaidEscape keeps a label inside its quotes: Mermaid reads entity codes
// there, so quotes and angle brackets from user data cannot end the label.
func mermaidEscape(s string) string {
	return mermaidEscaper.Replace(s)
}

// mermaidEscaper is built once: building a Replacer costs more than using it.
var mermaidEscaper = strings.NewReplacer(`"`, "#quot;", "<br/>", "<br/>", "<", "#lt;", ">", "#gt;")
