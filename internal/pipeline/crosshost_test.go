package pipeline

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Across hosts each side binds on its own address, ports are unique per host
// only, and every host launches its stages with the stage-based CLI.
func TestMultiHost(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}})
	got := config(t, res.ConfigYAML)
	want := map[string]any{
		"stage_args.0.engine_args.kv_transfer_config.kv_ip":            "10.0.0.1",
		"stage_args.1.engine_args.kv_transfer_config.kv_ip":            "10.0.0.2",
		"stage_args.0.runtime.env.VLLM_HOST_IP":                        "10.0.0.1",
		"stage_args.3.runtime.env.VLLM_HOST_IP":                        "10.0.0.2",
		"stage_args.0.runtime.env.VLLM_NIXL_SIDE_CHANNEL_PORT":         "25201",
		"stage_args.1.runtime.env.VLLM_NIXL_SIDE_CHANNEL_PORT":         "25201",
		"stage_args.0.runtime.env.VLLM_NIXL_SIDE_CHANNEL_HOST":         "10.0.0.1",
		"stage_args.1.runtime.env.VLLM_NIXL_SIDE_CHANNEL_HOST":         "10.0.0.2",
		"stage_args.2.runtime.env.VLLM_NIXL_SIDE_CHANNEL_PORT":         nil,
		"stage_args.1.runtime.devices":                                 "0",
		"stage_args.2.runtime.devices":                                 "1",
		"stage_args.1.engine_args.kv_transfer_config.kv_role":          "kv_consumer",
		"stage_args.0.engine_args.kv_transfer_config.kv_parallel_size": 2,
		// The prefill → decode edge crosses hosts, so it names a connector
		// that can (a shared-memory one is what it would get otherwise).
		"stage_args.0.output_connectors.to_stage_1":        "cross_host_0_1",
		"stage_args.1.input_connectors.from_stage_0":       "cross_host_0_1",
		"runtime.connectors.cross_host_0_1.name":           "MooncakeTransferEngineConnector",
		"runtime.connectors.cross_host_0_1.extra.host":     "10.0.0.1",
		"runtime.connectors.cross_host_0_1.extra.zmq_port": 25203,
		"runtime.connectors.cross_host_0_1.extra.protocol": "tcp",
	}
	for path, w := range want {
		if g := digPath(got, path); !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v, want %#v", path, g, w)
		}
	}
	// The PD pair's ports first, then the master's, then the edge's; each
	// host's own from the start of the range.
	wantPorts := map[string]int{"10.0.0.1/api": 8091, "10.0.0.1/prefill_side_channel": 25201, "10.0.0.1/omni_master": 25202,
		"10.0.0.1/edge_0_1": 25203, "10.0.0.2/decode_side_channel": 25201}
	if g := portsByName(res); !reflect.DeepEqual(g, wantPorts) {
		t.Errorf("ports = %v, want %v", g, wantPorts)
	}
	checkTwoHostLaunches(t, res)
	if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
		t.Errorf("planned config fails the checks: %v", errs)
	}
}

// checkTwoHostLaunches holds TestMultiHost's launches: the head on
// 10.0.0.1 serving stage 0, the worker on 10.0.0.2 one headless process
// per stage, each with its ports, environment and devices.
func checkTwoHostLaunches(t *testing.T, res *Result) {
	t.Helper()
	if len(res.Launches) != 2 {
		t.Fatalf("%d launches, want one per host", len(res.Launches))
	}
	head, worker := res.Launches[0], res.Launches[1]
	wantHead := []string{"vllm", "serve", seedModel, "--omni", "--port", "8091", "--stage-configs-path", DefaultConfigPath,
		"--stage-id", "0", "--omni-master-address", "10.0.0.1", "--omni-master-port", "25202"}
	if head.Host != "10.0.0.1" || len(head.Processes) != 1 || !reflect.DeepEqual(head.Processes[0].Argv, wantHead) {
		t.Errorf("head launch = %+v", head)
	}
	if !reflect.DeepEqual(res.ServeArgs, wantHead) || res.ServeCommand != ShellJoin(wantHead) {
		t.Errorf("serve_args %v should be the head's process", res.ServeArgs)
	}
	// The worker runs three processes, one per stage: no shell supervises
	// them.
	if worker.Host != "10.0.0.2" || !reflect.DeepEqual(worker.StageIDs, []int{1, 2, 3}) {
		t.Errorf("worker launch = %+v", worker)
	}
	if len(worker.Processes) != 3 {
		t.Fatalf("worker has %d processes, want one per stage", len(worker.Processes))
	}
	for i, proc := range worker.Processes {
		id := strconv.Itoa(i + 1)
		if proc.Role != ProcessHeadless || proc.StageID == nil || *proc.StageID != i+1 || proc.UnitName != "vllm-omni-stage@"+id+".service" ||
			ShellJoin(proc.Argv) != "vllm serve "+seedModel+" --omni --headless --omni-replica-address 10.0.0.2 --stage-configs-path "+DefaultConfigPath+" --stage-id "+id+" --omni-master-address 10.0.0.1 --omni-master-port 25202" {
			t.Errorf("worker process %d = %+v", i, proc)
		}
	}
	if len(head.Processes) != 1 || head.Processes[0].Role != ProcessHead {
		t.Errorf("head processes = %+v", head.Processes)
	}
	checkTwoHostProcesses(t, res, head, worker)
}

// checkTwoHostProcesses: each host and process of TestMultiHost has what it
// needs, the decode stage its side-channel port and address, the head the
// API and master ports, each host its GPUs.
func checkTwoHostProcesses(t *testing.T, res *Result, head, worker Launch) {
	t.Helper()
	if !reflect.DeepEqual(worker.Ports, []int{25201}) || worker.Env["VLLM_HOST_IP"] != "10.0.0.2" {
		t.Errorf("worker ports %v env %v", worker.Ports, worker.Env)
	}
	// Each process has what it needs: the decode stage its side-channel
	// port and address, the head the API and master ports.
	dec := worker.Processes[0]
	if dec.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"] != "25201" || dec.Env["VLLM_NIXL_SIDE_CHANNEL_HOST"] != "10.0.0.2" || dec.Env["VLLM_HOST_IP"] != "10.0.0.2" ||
		!reflect.DeepEqual(dec.Ports, []NamedPort{{"decode_side_channel", 25201}}) || !reflect.DeepEqual(dec.Devices, []int{0}) {
		t.Errorf("decode process = %+v", dec)
	}
	if got := head.Processes[0].Ports; !reflect.DeepEqual(got, []NamedPort{{"api", 8091}, {"prefill_side_channel", 25201}, {"omni_master", 25202}, {"edge_0_1", 25203}}) {
		t.Errorf("head process ports = %v", got)
	}
	if res.GPUCount != 2 || head.GPUCount != 1 || worker.GPUCount != 2 {
		t.Errorf("gpu counts: pipeline %d, head %d, worker %d; want the most any host needs (2), 1, 2", res.GPUCount, head.GPUCount, worker.GPUCount)
	}
}

// Mooncake across hosts, as a MultiConnector child beside NIXL (alone it
// fails the handoff gate): each side's bootstrap port is on its own host,
// in its kv_connector_extra_config and its environment alike.
func TestMultiHostMooncakeChild(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"},
		Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
			map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}}})
	got := config(t, res.ConfigYAML)
	child := "engine_args.kv_transfer_config.kv_connector_extra_config.connectors.1."
	want := map[string]any{
		"stage_args.0.engine_args.kv_transfer_config.kv_ip":                           "10.0.0.1",
		"stage_args.1.engine_args.kv_transfer_config.kv_ip":                           "10.0.0.2",
		"stage_args.0." + child + "kv_connector":                                      "MooncakeConnector",
		"stage_args.0." + child + "kv_connector_extra_config.mooncake_bootstrap_port": 25202,
		"stage_args.1." + child + "kv_connector_extra_config.mooncake_bootstrap_port": 25202,
		"stage_args.0.runtime.env.VLLM_MOONCAKE_BOOTSTRAP_PORT":                       "25202",
		"stage_args.1.runtime.env.VLLM_MOONCAKE_BOOTSTRAP_PORT":                       "25202",
		"stage_args.0.runtime.env.VLLM_NIXL_SIDE_CHANNEL_PORT":                        "25201",
		"stage_args.1.runtime.env.VLLM_NIXL_SIDE_CHANNEL_HOST":                        "10.0.0.2",
	}
	for path, w := range want {
		if g := digPath(got, path); !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v, want %#v", path, g, w)
		}
	}
	wantPorts := map[string]int{"10.0.0.1/api": 8091, "10.0.0.1/prefill_side_channel": 25201, "10.0.0.1/prefill_bootstrap": 25202,
		"10.0.0.1/omni_master": 25203, "10.0.0.1/edge_0_1": 25204, "10.0.0.2/decode_side_channel": 25201, "10.0.0.2/decode_bootstrap": 25202}
	if g := portsByName(res); !reflect.DeepEqual(g, wantPorts) {
		t.Errorf("ports = %v, want %v", g, wantPorts)
	}
	if len(res.Launches) != 2 || len(res.Launches[1].Processes) != 3 {
		t.Fatalf("launches = %+v, want the head's host and the worker's three processes", res.Launches)
	}
	dec := res.Launches[1].Processes[0]
	if dec.Env["VLLM_MOONCAKE_BOOTSTRAP_PORT"] != "25202" || dec.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"] != "25201" ||
		!reflect.DeepEqual(dec.Ports, []NamedPort{{"decode_side_channel", 25201}, {"decode_bootstrap", 25202}}) {
		t.Errorf("decode process env %v ports %v", dec.Env, dec.Ports)
	}
	if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
		t.Errorf("planned config fails the checks: %v", errs)
	}
}

// A headless stage on another host names the address its peers reach it
// at with --omni-replica-address where the release has the flag: from
// 0.22.0 on; 0.21.0rc1 has no replica flags, so the address is detected.
func TestMultiHostReplicaFlags(t *testing.T) {
	for _, tc := range []struct {
		version string
		flag    bool
	}{
		{"0.20.0", false},
		{"0.21.0rc1", false},
		{"0.22.0", true},
		{"0.23.0rc1", true},
		{"0.24.0", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			res := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: tc.version, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}})
			if len(res.Launches) != 2 {
				t.Fatalf("%d launches, want one per host", len(res.Launches))
			}
			for _, l := range res.Launches {
				for _, proc := range l.Processes {
					hasFlag := strings.Contains(commandOf(proc), " --omni-replica-address ")
					want := tc.flag && l.Host == "10.0.0.2"
					if hasFlag != want || strings.Contains(commandOf(proc), "--omni-dp-size-local") {
						t.Errorf("%s on %s: %q; want --omni-replica-address %v", proc.UnitName, l.Host, commandOf(proc), want)
					}
					if want && !strings.Contains(commandOf(proc), " --headless --omni-replica-address 10.0.0.2 ") {
						t.Errorf("%s: %q does not name its own host", proc.UnitName, commandOf(proc))
					}
					// Across hosts every release launches each stage on its own.
					if proc.StageID == nil || !strings.Contains(commandOf(proc), " --omni-master-address 10.0.0.1 ") {
						t.Errorf("%s: %q is not a stage-based launch registering with 10.0.0.1", proc.UnitName, commandOf(proc))
					}
				}
			}
		})
	}
}
