// Package kvconnector is the table of the KV connectors the provider
// wires between prefill and decode. A connector is one Entry: the facts
// the release table derives from it (which vLLM lines load it, whether it
// passes vllm-omni's handoff gate), what a plan gives each side of the PD
// pair (ports, kv_transfer_config settings, environment, memory locking),
// the checks of a config that uses it, and the words of its schema
// description. The planner, the release table and the provider's schema
// read the entries; none of them names a connector of its own.
//
// The package holds values and functions of values only: a connector's
// Wire sees a Context, never the planner.
package kvconnector

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// Multi is vLLM's connector that runs several others, each child one of
// the entries. It is no entry itself: the planner composes it from its
// children's.
const Multi = "MultiConnector"

// Entry is everything the provider knows of one KV connector class.
type Entry struct {
	Name string
	// Factory is where vLLM's connector factory registers the class.
	Factory string
	// GoneInVLLM is the first vLLM line whose factory no longer has the
	// class, "" while every line the release table knows has it; GoneBy
	// says which change removed it.
	GoneInVLLM, GoneBy string
	// ReturnsRequestID is true when the class's scheduler-side
	// request_finished returns the remote_request_id vllm-omni's
	// orchestrator needs before it sends a PD request on to decode (the
	// handoff gate); HandoffSource is where that was read.
	ReturnsRequestID bool
	HandoffSource    string
	// AllowsBoth is true when both sides may take kv_role kv_both.
	AllowsBoth bool
	// Transport is the Python package the class imports its transfer
	// engine from, which vLLM does not install; the preflight imports it.
	Transport string
	// TakesProtocol is true when connector.protocol and
	// connector.device_name apply to the class.
	TakesProtocol bool
	// ProxyPort names, in the plan's port ledger and its messages, the
	// port of a proxy the class dials, which the user runs beside the
	// pipeline and names by proxy_ip and proxy_port in the class's extra
	// config; "" when it dials none.
	ProxyPort string
	// TextPorts are the class's kv_connector_extra_config keys that hold a
	// port it reads as text, each with why: the plan writes them as text,
	// and a config that writes a number there is refused.
	TextPorts map[string]string
	// RankPorts are the class's kv_transfer_config keys that name the
	// first of a block of ports, one per worker rank (Side.WorkerRanks),
	// which a stage that loads the class binds on its host. On a stage
	// outside the PD pair, whose settings the plan keeps as written, the
	// port ledger holds the block there.
	RankPorts []string
	// APIPort is the kv_connector_extra_config key the class reads the
	// pipeline's API port from ("" for none): a port it names, not one
	// its stage binds.
	APIPort string
	// EnvPort is a port the class binds from an environment variable
	// while its peer dials the one its extra config names; nil for none.
	// Release conformance holds every PD stage that loads the class to
	// the two being equal (release_mooncake_bootstrap_env).
	EnvPort *EnvPort
	// RequiredExtra are kv_connector_extra_config keys the user must give.
	RequiredExtra []string
	// ManagedExtra are kv_connector_extra_config keys the plan writes
	// itself, each with the attribute that sets it.
	ManagedExtra map[string]string
	// Memlock is true when the class registers GPU memory with an RDMA
	// NIC under the connector settings c, so its process needs an
	// unlimited LimitMEMLOCK and the RDMA devices.
	Memlock func(c Settings) bool
	// SidePorts lists the ports one side of the pair listens on.
	SidePorts func(s Side) []SidePort
	// HeadPorts names ports the class needs on the head, one each, beside
	// the pair's own (LMCache's PD proxy); Context.HeadPorts has them.
	HeadPorts []string
	// Wire adds the class's settings for one side of the pair.
	Wire func(c Context, w *Wiring)
	// CheckSide refuses a side the class cannot run, before ports are
	// handed out; nil for none.
	CheckSide func(s Side) *Finding
	// CheckPair checks a config's PD pair that names the class in its
	// kv_transfer_config; nil for none.
	CheckPair func(pre, dec ConfigSide) []Finding
	// Doc are the entry's words in the provider's schema descriptions.
	Doc Doc
}

// Doc is how the schema describes a connector.
type Doc struct {
	// Handshake names the port the other side dials, as the
	// bootstrap_port description says it ("Mooncake's bootstrap port").
	Handshake string
	// Extra says what the class needs in extra_config, "" for nothing.
	Extra string
}

// Settings are the connector block's typed attributes an entry reads.
type Settings struct {
	Protocol   string // connector.protocol
	DeviceName string // connector.device_name
}

// Side is one side of the PD pair as an entry sees it.
type Side struct {
	Key     string // "prefill" or "decode"
	Prefill bool
	Host    string // "" for the one host
	TP, PP  int    // tensor and pipeline parallel sizes
	DP      int    // data-parallel size
	// Replicas is the side's runtime.num_replicas.
	Replicas int
	// Ports are the side's ports by suffix (as SidePort.Suffix names
	// them); set once ports are handed out.
	Ports map[string]int
}

// WorkerRanks is the side's worker processes: one per rank of its
// tensor, pipeline and data parallel groups.
func (s Side) WorkerRanks() int { return s.TP * s.PP * s.DP }

// EnvPort is a port a class binds from the environment variable Env
// (Default when it is unset) while its peer dials the port its
// kv_connector_extra_config names at Extra.
type EnvPort struct {
	Extra, Env string
	Default    int
}

// SidePort is a port, or a block of ports, one side listens on.
type SidePort struct {
	Suffix string
	Count  int
	// Handshake marks the port the peer dials for the KV handoff, the one
	// <side>.bootstrap_port sets.
	Handshake bool
	// Index names the ports of a block of Count > 1:
	// <side><suffix><Index><N> (IndexDP, IndexRank).
	Index string
}

// How the ports of a block are named.
const (
	IndexDP   = "_dp"   // one per data-parallel rank
	IndexRank = "_rank" // one per worker rank
)

// Context is what Wire may read of the plan.
type Context struct {
	Settings
	Side      Side // the side being wired
	Decode    Side // the pair's decode side
	Head      string
	MultiHost bool
	APIPort   int
	// HeadPorts are the ports Entry.HeadPorts asked for, by name.
	HeadPorts map[string]int
}

// Wiring collects one side's settings in the order they are written:
// kv_transfer_config keys, kv_connector_extra_config keys, environment.
type Wiring struct {
	KV, Extra, Env []KV
}

// KV is one key and its value.
type KV struct {
	Key   string
	Value any
}

// SetEnv adds an environment variable, its value as text.
func (w *Wiring) SetEnv(name string, value any) {
	w.Env = append(w.Env, KV{name, fmt.Sprint(value)})
}

// ConfigSide is one side of a config's PD pair as CheckPair reads it.
type ConfigSide struct {
	Describe string // "stage 0 (thinker)"
	Host     string
	// ExtraInt reads a whole number from kv_connector_extra_config.
	ExtraInt func(key string) (int, bool)
	// Env reads the stage's environment.
	Env func(name string) (string, bool)
}

// Finding is a problem an entry's check reports.
type Finding struct {
	Code            diagcode.Code
	Summary, Detail string
}

// Lookup finds the entry of a class.
func Lookup(name string) (Entry, bool) {
	for _, e := range Entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Passing lists the classes that pass the handoff gate, in table order.
func Passing() []string {
	var out []string
	for _, e := range Entries {
		if e.ReturnsRequestID {
			out = append(out, e.Name)
		}
	}
	return out
}

// ListWords joins names as prose: "a", "a or b", "a, b or c".
func ListWords(names []string, last string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + last + " " + names[len(names)-1]
}
