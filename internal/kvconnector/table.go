package kvconnector

import (
	"fmt"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// The classes of the entries.
const (
	Mooncake = "MooncakeConnector"
	Nixl     = "NixlConnector"
	P2pNccl  = "P2pNcclConnector"
	LMCache  = "LMCacheConnectorV1"
)

// Default is the connector a plan gets when it names none: the one whose
// prefill returns remote_request_id (the handoff gate).
const Default = Nixl

// factory is where vLLM registers the classes below. MooncakeConnector is
// in vLLM since PR #24718 (documented from 0.15); vllm-omni's patch meant
// to make it return remote_request_id (distributed/kv_transfer/
// monkey_patch.py) was never called and was deleted by ccb5c53e
// (2026-06-22). P2pNcclConnector was removed by vLLM PR #44854 (on vLLM
// main 2026-06-08); its first release without it is not pinned, so it is
// taken as gone from vLLM 0.23.
const factory = "vllm/distributed/kv_transfer/kv_connector/factory.py@a4cd9d0d"

// mooncakeBootstrap: vLLM's bootstrap server binds
// VLLM_MOONCAKE_BOOTSTRAP_PORT (8998 when unset) while vllm-omni points
// decode at kv_connector_extra_config.mooncake_bootstrap_port, and its
// patch refuses a port already taken
// (vllm_omni/distributed/kv_transfer/mooncake_pd_patch.py@3ba7024e;
// vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py@00f4240e).
var mooncakeBootstrap = EnvPort{Extra: "mooncake_bootstrap_port", Env: "VLLM_MOONCAKE_BOOTSTRAP_PORT", Default: 8998}

// p2pHTTPPort is where P2pNcclConnector is given the API port.
const p2pHTTPPort = "http_port"

// Entries are the connectors the provider wires, in the order the docs
// list them; any other class is refused rather than written
// half-configured. Adding one is an entry here and its case in
// table_test.go. Every entry pairs equal tensor-parallel sizes only: vLLM
// alone would let NIXL decode run more ranks, but vllm-omni's PD validator
// refuses any difference (releases.CheckEqualTP).
var Entries = []Entry{
	{
		Name: Mooncake, Factory: factory + "; vLLM PR #24718",
		HandoffSource: "request_finished returns no kv_transfer_params since vLLM PR #31034 (2026-02-04)",
		AllowsBoth:    true, TakesProtocol: true,
		Transport: "mooncake.engine", // pip mooncake-transfer-engine; vLLM imports TransferEngine from it
		ManagedExtra: map[string]string{
			"mooncake_bootstrap_port": "prefill.bootstrap_port and decode.bootstrap_port",
			"mooncake_protocol":       "connector.protocol",
			"device_name":             "connector.device_name",
		},
		Memlock:   func(c Settings) bool { return c.Protocol == "rdma" },
		SidePorts: func(Side) []SidePort { return []SidePort{{Suffix: "_bootstrap", Count: 1, Handshake: true}} },
		EnvPort:   &mooncakeBootstrap,
		Wire: func(c Context, w *Wiring) {
			port := c.Side.Ports["_bootstrap"]
			w.Extra = append(w.Extra, KV{mooncakeBootstrap.Extra, port})
			if c.Protocol != "" {
				w.Extra = append(w.Extra, KV{"mooncake_protocol", c.Protocol})
			}
			if c.DeviceName != "" {
				w.Extra = append(w.Extra, KV{"device_name", c.DeviceName})
			}
			// The two ports are set equal in every plan (mooncakeBootstrap):
			// two pipelines on one host would otherwise both take 8998.
			w.SetEnv(mooncakeBootstrap.Env, port)
		},
		CheckPair: checkMooncakeBootstrap,
		Doc:       Doc{Handshake: "Mooncake's bootstrap port"},
	},
	{
		Name: Nixl, Factory: factory,
		ReturnsRequestID: true,
		HandoffSource:    "request_finished returns remote_request_id (vLLM PR #29665, 2025-12-05)",
		AllowsBoth:       true,
		Transport:        "nixl._api", // pip nixl; vLLM imports nixl_agent from it
		// NIXL registers GPU memory with the NIC whatever it runs over.
		Memlock: func(Settings) bool { return true },
		SidePorts: func(s Side) []SidePort {
			// vLLM's NIXL handshake listener is one per engine, on the
			// scheduler side, at VLLM_NIXL_SIDE_CHANNEL_PORT plus the
			// engine's data-parallel index (NixlConnectorScheduler,
			// v1/nixl/scheduler.py; no tensor-parallel term since vLLM
			// PR #26338), so a side needs one port per data-parallel rank.
			return []SidePort{{Suffix: "_side_channel", Count: s.DP, Handshake: true, Index: IndexDP}}
		},
		Wire: func(c Context, w *Wiring) {
			// Two NIXL engines on one host would both take the default 5600.
			w.SetEnv("VLLM_NIXL_SIDE_CHANNEL_PORT", c.Side.Ports["_side_channel"])
			if c.MultiHost {
				w.SetEnv("VLLM_NIXL_SIDE_CHANNEL_HOST", c.Side.Host)
			}
		},
		CheckSide: checkNixlReplicas,
		Doc:       Doc{Handshake: "NIXL's side channel (`VLLM_NIXL_SIDE_CHANNEL_PORT`; with `data_parallel_size` N it is the first of N)"},
	},
	{
		Name: P2pNccl, Factory: factory,
		GoneInVLLM: "0.23", GoneBy: "vLLM PR #44854",
		HandoffSource: "request_finished returns (False, None)",
		ProxyPort:     "p2p_nccl_proxy", RequiredExtra: []string{"proxy_ip", "proxy_port"},
		// vLLM joins the two as text (p2p_nccl_engine.py@28be48fa :102-108).
		TextPorts:    map[string]string{"proxy_port": `vLLM's P2pNcclConnector joins proxy_ip + ":" + proxy_port and fails on a number`},
		ManagedExtra: map[string]string{p2pHTTPPort: "api_port"},
		APIPort:      p2pHTTPPort,
		// Each worker binds kv_port plus its rank in the world group
		// (P2pNcclConnector's port_offset, vllm/distributed/kv_transfer/
		// kv_connector/v1/p2p/p2p_nccl_connector.py@28be48fa :91-104 and
		// p2p_nccl_engine.py :91), which with data parallelism spans every
		// data-parallel rank (vllm/distributed/parallel_state.py@28be48fa
		// :1406-1415), and its peer dials the same offset
		// (p2p_nccl_connector.py :206): a block of tp × pp × dp ports.
		RankPorts: []string{"kv_port"},
		SidePorts: func(s Side) []SidePort {
			return []SidePort{{Suffix: "_kv_port", Count: s.WorkerRanks(), Handshake: true, Index: IndexRank}}
		},
		Wire: func(c Context, w *Wiring) {
			w.KV = append(w.KV, KV{"kv_port", c.Side.Ports["_kv_port"]})
			w.Extra = append(w.Extra, KV{p2pHTTPPort, c.APIPort})
		},
		Doc: Doc{Handshake: "P2pNccl's `kv_port`",
			Extra: "`P2pNcclConnector` needs `proxy_ip` (IPv4 or `localhost`) and `proxy_port` (1-65535, written as text) here, or in its child entry's `kv_connector_extra_config`"},
	},
	{
		Name: LMCache, Factory: factory,
		HandoffSource: "request_finished returns None or {\"first_tok\": ...}",
		Transport:     "lmcache",
		SidePorts: func(s Side) []SidePort {
			if s.Prefill {
				return nil
			}
			return []SidePort{{Suffix: "_peer_init", Count: 1, Handshake: true}, {Suffix: "_peer_alloc", Count: 1}}
		},
		HeadPorts: []string{"lmcache_proxy"},
		Wire: func(c Context, w *Wiring) {
			// LMCache reads its configuration from LMCACHE_* variables.
			w.SetEnv("LMCACHE_ENABLE_PD", "True")
			if c.Side.Prefill {
				w.SetEnv("LMCACHE_PD_ROLE", "sender")
			} else {
				w.SetEnv("LMCACHE_PD_ROLE", "receiver")
			}
			w.SetEnv("LMCACHE_PD_PEER_HOST", hostOrLocal(c.Decode.Host))
			w.SetEnv("LMCACHE_PD_PEER_INIT_PORT", c.Decode.Ports["_peer_init"])
			w.SetEnv("LMCACHE_PD_PEER_ALLOC_PORT", c.Decode.Ports["_peer_alloc"])
			if c.Side.Prefill {
				w.SetEnv("LMCACHE_PD_PROXY_HOST", hostOrLocal(c.Head))
				w.SetEnv("LMCACHE_PD_PROXY_PORT", c.HeadPorts["lmcache_proxy"])
			}
		},
		Doc: Doc{Handshake: "LMCache's peer-init port on decode"},
	},
}

func hostOrLocal(h string) string {
	if h == "" {
		return "localhost"
	}
	return h
}

// checkNixlReplicas refuses replicas of the PD pair over NIXL. Replicas
// get no data-parallel index of their own (vllm_omni/engine/stage_runtime.py
// @d4a869fe launches each from the stage's config and environment), so
// vLLM's handshake listener would bind one port for all of them.
func checkNixlReplicas(s Side) *Finding {
	if s.Replicas <= 1 {
		return nil
	}
	return &Finding{diagcode.NixlReplicasOnePort, "NIXL replicas of one stage would share one port",
		fmt.Sprintf("the %s stage runs %d replicas (num_replicas on the base config's split stage), and vllm-omni starts each with the same environment and data-parallel index, so NixlConnector's handshake listener binds one VLLM_NIXL_SIDE_CHANNEL_PORT %d times; set the split stage's num_replicas to 1 and run more pipelines for more capacity.",
			s.Key, s.Replicas, s.Replicas)}
}

// checkMooncakeBootstrap: two sides on one host cannot bind one bootstrap
// port, and the port vLLM binds (VLLM_MOONCAKE_BOOTSTRAP_PORT) must be the
// one the extra config points the peer at.
func checkMooncakeBootstrap(pre, dec ConfigSide) []Finding {
	var out []Finding
	pp, pok := pre.ExtraInt(mooncakeBootstrap.Extra)
	dp, dok := dec.ExtraInt(mooncakeBootstrap.Extra)
	if pok && dok && pp == dp && pre.Host == dec.Host {
		out = append(out, Finding{diagcode.PortCollision, "prefill and decode use the same Mooncake bootstrap port",
			fmt.Sprintf("both %s and %s bind mooncake_bootstrap_port %d on one host; give each its own port.", pre.Describe, dec.Describe, pp)})
	}
	for _, x := range []struct {
		s    ConfigSide
		port int
		ok   bool
	}{{pre, pp, pok}, {dec, dp, dok}} {
		if v, ok := x.s.Env(mooncakeBootstrap.Env); ok && x.ok && v != fmt.Sprint(x.port) {
			out = append(out, Finding{diagcode.BootstrapEnvMismatch, "the bootstrap port in env differs from the one in kv_connector_extra_config",
				fmt.Sprintf("%s: VLLM_MOONCAKE_BOOTSTRAP_PORT is %s but mooncake_bootstrap_port is %d; the server binds one and peers dial the other. Make them equal.", x.s.Describe, v, x.port)})
		}
	}
	return out
}
