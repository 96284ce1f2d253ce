package kvconnector

import (
	"maps"
	"reflect"
	"slices"
	"testing"
)

// entryFacts is one case per entry: what the entry gives each side of a
// pair with tensor-parallel size 2 and data-parallel size 2 on one host,
// and its facts. An entry without a case fails TestEntries_EveryOneHasACase.
var entryFacts = map[string]struct {
	prefillPorts, decodePorts []SidePort
	prefillEnv, decodeEnv     []string // variable names, in order
	memlockTCP, memlockRDMA   bool
	passesGate                bool
	goneIn                    string
	// What a config's settings for the class mean beside the pair's own
	// wiring: the proxy it dials (its port's name), the ports it reads as
	// text, the blocks a stage that loads it binds, the port it binds from
	// an environment variable (the variable) and the key it reads the API
	// port from.
	proxyPort string
	textPorts []string
	rankPorts []string
	envPort   string
	apiPort   string
}{
	Mooncake: {
		prefillPorts: []SidePort{{Suffix: "_bootstrap", Count: 1, Handshake: true}},
		decodePorts:  []SidePort{{Suffix: "_bootstrap", Count: 1, Handshake: true}},
		prefillEnv:   []string{"VLLM_MOONCAKE_BOOTSTRAP_PORT"}, decodeEnv: []string{"VLLM_MOONCAKE_BOOTSTRAP_PORT"},
		memlockRDMA: true, envPort: "VLLM_MOONCAKE_BOOTSTRAP_PORT",
	},
	Nixl: {
		prefillPorts: []SidePort{{Suffix: "_side_channel", Count: 2, Handshake: true, Index: IndexDP}},
		decodePorts:  []SidePort{{Suffix: "_side_channel", Count: 2, Handshake: true, Index: IndexDP}},
		prefillEnv:   []string{"VLLM_NIXL_SIDE_CHANNEL_PORT"}, decodeEnv: []string{"VLLM_NIXL_SIDE_CHANNEL_PORT"},
		memlockTCP: true, memlockRDMA: true, passesGate: true,
	},
	P2pNccl: {
		prefillPorts: []SidePort{{Suffix: "_kv_port", Count: 4, Handshake: true, Index: IndexRank}},
		decodePorts:  []SidePort{{Suffix: "_kv_port", Count: 4, Handshake: true, Index: IndexRank}},
		goneIn:       "0.23",
		proxyPort:    "p2p_nccl_proxy", textPorts: []string{"proxy_port"}, rankPorts: []string{"kv_port"}, apiPort: "http_port",
	},
	LMCache: {
		decodePorts: []SidePort{{Suffix: "_peer_init", Count: 1, Handshake: true}, {Suffix: "_peer_alloc", Count: 1}},
		prefillEnv: []string{"LMCACHE_ENABLE_PD", "LMCACHE_PD_ROLE", "LMCACHE_PD_PEER_HOST", "LMCACHE_PD_PEER_INIT_PORT", "LMCACHE_PD_PEER_ALLOC_PORT",
			"LMCACHE_PD_PROXY_HOST", "LMCACHE_PD_PROXY_PORT"},
		decodeEnv: []string{"LMCACHE_ENABLE_PD", "LMCACHE_PD_ROLE", "LMCACHE_PD_PEER_HOST", "LMCACHE_PD_PEER_INIT_PORT", "LMCACHE_PD_PEER_ALLOC_PORT"},
	},
}

func TestEntries_EveryOneHasACase(t *testing.T) {
	for _, e := range Entries {
		if _, ok := entryFacts[e.Name]; !ok {
			t.Errorf("%s has no case in entryFacts: add what it gives each side", e.Name)
		}
	}
	if len(entryFacts) != len(Entries) {
		t.Errorf("entryFacts has %d cases for %d entries", len(entryFacts), len(Entries))
	}
}

func TestEntries_Facts(t *testing.T) {
	for _, e := range Entries {
		want, ok := entryFacts[e.Name]
		if !ok {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			pre := Side{Key: "prefill", Prefill: true, TP: 2, PP: 1, DP: 2, Replicas: 1, Ports: map[string]int{}}
			dec := Side{Key: "decode", TP: 2, PP: 1, DP: 2, Replicas: 1, Ports: map[string]int{}}
			if got := e.SidePorts(pre); !reflect.DeepEqual(got, want.prefillPorts) && len(got)+len(want.prefillPorts) > 0 {
				t.Errorf("prefill ports = %+v, want %+v", got, want.prefillPorts)
			}
			if got := e.SidePorts(dec); !reflect.DeepEqual(got, want.decodePorts) {
				t.Errorf("decode ports = %+v, want %+v", got, want.decodePorts)
			}
			for _, side := range []struct {
				s   Side
				env []string
			}{{pre, want.prefillEnv}, {dec, want.decodeEnv}} {
				var w Wiring
				e.Wire(Context{Side: side.s, Decode: dec, HeadPorts: map[string]int{}}, &w)
				var names []string
				for _, kv := range w.Env {
					names = append(names, kv.Key)
				}
				if !reflect.DeepEqual(names, side.env) && len(names)+len(side.env) > 0 {
					t.Errorf("%s env = %v, want %v", side.s.Key, names, side.env)
				}
			}
			memlock := func(protocol string) bool { return e.Memlock != nil && e.Memlock(Settings{Protocol: protocol}) }
			if memlock("tcp") != want.memlockTCP || memlock("rdma") != want.memlockRDMA {
				t.Errorf("memlock tcp %v rdma %v, want %v %v", memlock("tcp"), memlock("rdma"), want.memlockTCP, want.memlockRDMA)
			}
			if e.ReturnsRequestID != want.passesGate || e.GoneInVLLM != want.goneIn {
				t.Errorf("passes the gate %v, gone in %q; want %v, %q", e.ReturnsRequestID, e.GoneInVLLM, want.passesGate, want.goneIn)
			}
			envPort := ""
			if e.EnvPort != nil {
				envPort = e.EnvPort.Env
			}
			if e.ProxyPort != want.proxyPort || !slices.Equal(slices.Sorted(maps.Keys(e.TextPorts)), want.textPorts) ||
				!slices.Equal(e.RankPorts, want.rankPorts) || envPort != want.envPort || e.APIPort != want.apiPort {
				t.Errorf("proxy %q, text ports %v, rank ports %v, env port %q, API port %q; want %q, %v, %v, %q, %q",
					e.ProxyPort, slices.Sorted(maps.Keys(e.TextPorts)), e.RankPorts, envPort, e.APIPort, want.proxyPort, want.textPorts, want.rankPorts, want.envPort, want.apiPort)
			}
		})
	}
}

// Every entry says where its facts come from and how the docs describe
// it, and has a handshake port on at least one side.
func TestEntries_WellFormed(t *testing.T) {
	managed := map[string]string{}
	for _, e := range Entries {
		if e.Name == "" || e.Name == Multi || e.Factory == "" || e.HandoffSource == "" || e.Doc.Handshake == "" {
			t.Errorf("%q: name, factory source, handoff source and Doc.Handshake are required", e.Name)
		}
		if e.SidePorts == nil || e.Wire == nil {
			t.Errorf("%s: SidePorts and Wire are required", e.Name)
			continue
		}
		if (e.GoneInVLLM == "") != (e.GoneBy == "") {
			t.Errorf("%s: GoneInVLLM and GoneBy go together", e.Name)
		}
		if !hasHandshake(e) {
			t.Errorf("%s: no side has a handshake port", e.Name)
		}
		checkConfigFields(t, e)
		for k := range e.ManagedExtra {
			if other, dup := managed[k]; dup {
				t.Errorf("%s and %s both manage extra_config.%s", other, e.Name, k)
			}
			managed[k] = e.Name
		}
	}
	if d, ok := Lookup(Default); !ok || !d.ReturnsRequestID {
		t.Errorf("the default %s must be an entry that passes the handoff gate", Default)
	}
}

// hasHandshake reports whether a side of a one-rank pair has a handshake
// port.
func hasHandshake(e Entry) bool {
	for _, s := range []Side{{Prefill: true, TP: 1, PP: 1, DP: 1}, {TP: 1, PP: 1, DP: 1}} {
		for _, sp := range e.SidePorts(s) {
			if sp.Handshake {
				return true
			}
		}
	}
	return false
}

// checkConfigFields holds what an entry says of a config's settings to
// what the planner needs of it: a proxy's address and port required, a
// reason for each text port, an env port's three parts.
func checkConfigFields(t *testing.T, e Entry) {
	t.Helper()
	if e.ProxyPort != "" && (!slices.Contains(e.RequiredExtra, "proxy_ip") || !slices.Contains(e.RequiredExtra, "proxy_port")) {
		t.Errorf("%s dials a proxy: proxy_ip and proxy_port are required extra config", e.Name)
	}
	for k, why := range e.TextPorts {
		if why == "" {
			t.Errorf("%s: text port %s says no why", e.Name, k)
		}
	}
	if p := e.EnvPort; p != nil && (p.Extra == "" || p.Env == "" || p.Default < 1) {
		t.Errorf("%s: the env port needs its extra key, its variable and its default: %+v", e.Name, *p)
	}
}

func TestListWords(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := ListWords(tc.in, "or"); got != tc.want {
			t.Errorf("ListWords(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
