package provider

import (
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
)

// The connector attributes' descriptions, derived from the connector
// entries (kvconnector.Entries) so that a new entry reaches the schema
// and the docs (make docs) without an edit here.

func code(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return out
}

// defaultFirst lists the entries' classes that pass keep, the default
// first, then in table order.
func defaultFirst(keep func(kvconnector.Entry) bool) []string {
	var out []string
	if e, _ := kvconnector.Lookup(kvconnector.Default); keep(e) {
		out = append(out, e.Name)
	}
	for _, e := range kvconnector.Entries {
		if e.Name != kvconnector.Default && keep(e) {
			out = append(out, e.Name)
		}
	}
	return out
}

func connectorNameDescription() string {
	others := code(defaultFirst(func(e kvconnector.Entry) bool { return e.Name != kvconnector.Default }))
	names := append([]string{"`" + kvconnector.Default + "` (the default)", "`" + kvconnector.Multi + "`"}, others...)
	passing := code(kvconnector.Passing())
	verb := "returns"
	if len(passing) > 1 {
		verb = "return"
	}
	return "vLLM KV connector class: " + kvconnector.ListWords(names, "or") + ". " +
		"vllm-omni's orchestrator hands a request from prefill to decode only when prefill's KV transfer parameters carry `remote_request_id`, " +
		"and fails it otherwise; of these only " + kvconnector.ListWords(passing, "and") + " " + verb + " it, so the others are refused on every release (`" +
		kvconnector.Multi + "` passes with a " + kvconnector.ListWords(passing, "or") + " child). Unset, it reads back as the connector planned."
}

func connectorProtocolDescription() string {
	takes := code(defaultFirst(func(e kvconnector.Entry) bool { return e.TakesProtocol }))
	return "Mooncake transport: `tcp` or `rdma`, for " + kvconnector.ListWords(takes, "or") + " alone or as a `" + kvconnector.Multi + "` child."
}

func connectorExtraConfigDescription() string {
	var needs []string
	for _, e := range kvconnector.Entries {
		if e.Doc.Extra != "" {
			needs = append(needs, e.Doc.Extra)
		}
	}
	needs = append(needs, "`"+kvconnector.Multi+"` takes its children as `connectors = [{ kv_connector = \""+kvconnector.Default+"\" }, ...]`")
	return "Any object, merged into `kv_connector_extra_config` on both stages of the pair. " + strings.Join(needs, "; ") + "."
}

func connectorKVBothDescription() string {
	both := defaultFirst(func(e kvconnector.Entry) bool { return e.AllowsBoth })
	both = append(both, "a "+kvconnector.Multi+" of those (with a "+kvconnector.ListWords(kvconnector.Passing(), "or")+" child)")
	return "Give both sides `kv_role = kv_both` instead of `kv_producer` / `kv_consumer`. " + kvconnector.ListWords(both, "and") + " allow it. Default: `false`."
}

func bootstrapPortDescription() string {
	def, _ := kvconnector.Lookup(kvconnector.Default)
	var alone []string
	for _, e := range kvconnector.Entries {
		if !e.ReturnsRequestID {
			alone = append(alone, e.Doc.Handshake)
		}
	}
	return "The port the other side dials for the KV handoff. With `" + def.Name + "`, and with a `" + kvconnector.Multi + "` whatever the order of its children, that is " +
		def.Doc.Handshake + ", the connector whose prefill hands decode the `remote_request_id` vllm-omni needs; the other children's ports (such as Mooncake's `prefill_bootstrap`) are allocated and listed in `ports`. " +
		"For a connector alone it is its own: " + strings.Join(alone, ", ") + ". Default: allocated from `port_range`. Unset, it reads back as the port planned; null for a connector whose side listens on none."
}
