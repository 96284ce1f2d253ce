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
		"stage_args.0.runtime.env.VLLM_MOONCAKE_BOOTSTRAP_PORT":        "25202",
		"stage_args.1.runtime.env.VLLM_MOONCAKE_BOOTSTRAP_PORT":        "25201",
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
	wantPorts := map[string]int{"10.0.0.1/api": 8091, "10.0.0.1/omni_master": 25201, "10.0.0.1/prefill_bootstrap": 25202,
		"10.0.0.1/edge_0_1": 25203, "10.0.0.2/decode_bootstrap": 25201}
	if g := portsByName(res); !reflect.DeepEqual(g, wantPorts) {
		t.Errorf("ports = %v, want %v", g, wantPorts)
	}
	if len(res.Launches) != 2 {
		t.Fatalf("%d launches, want one per host", len(res.Launches))
	}
	head, worker := res.Launches[0], res.Launches[1]
	wantHead := []string{"vllm", "serve", seedModel, "--omni", "--port", "8091", "--stage-configs-path", DefaultConfigPath,
		"--stage-id", "0", "--omni-master-address", "10.0.0.1", "--omni-master-port", "25201"}
	if head.Host != "10.0.0.1" || !reflect.DeepEqual(head.Argv, wantHead) || head.Command != ShellJoin(wantHead) {
		t.Errorf("head launch = %+v", head)
	}
	if !reflect.DeepEqual(res.ServeArgs, head.Argv) {
		t.Errorf("serve_args %v should be the head's launch", res.ServeArgs)
	}
	// The worker runs three processes, one per stage, and so has no single
	// command: no shell supervises them.
	if worker.Host != "10.0.0.2" || !reflect.DeepEqual(worker.StageIDs, []int{1, 2, 3}) || worker.Argv != nil || worker.Command != "" {
		t.Errorf("worker launch = %+v", worker)
	}
	if len(worker.Processes) != 3 {
		t.Fatalf("worker has %d processes, want one per stage", len(worker.Processes))
	}
	for i, proc := range worker.Processes {
		id := strconv.Itoa(i + 1)
		if proc.Role != ProcessHeadless || proc.StageID == nil || *proc.StageID != i+1 || proc.UnitName != "vllm-omni-stage-"+id+".service" ||
			!strings.HasSuffix(proc.Command, "--stage-id "+id+" --headless --omni-master-address 10.0.0.1 --omni-master-port 25201 --omni-replica-address 10.0.0.2") {
			t.Errorf("worker process %d = %+v", i, proc)
		}
	}
	if len(head.Processes) != 1 || head.Processes[0].Role != ProcessHead || head.Processes[0].Command != head.Command {
		t.Errorf("head processes = %+v", head.Processes)
	}
	if !reflect.DeepEqual(worker.Ports, []int{25201}) || worker.Env["VLLM_HOST_IP"] != "10.0.0.2" {
		t.Errorf("worker ports %v env %v", worker.Ports, worker.Env)
	}
	// Each process has what it needs: the decode stage its bootstrap port
	// and address, the head the API and master ports.
	dec := worker.Processes[0]
	if dec.Env["VLLM_MOONCAKE_BOOTSTRAP_PORT"] != "25201" || dec.Env["VLLM_HOST_IP"] != "10.0.0.2" ||
		!reflect.DeepEqual(dec.Ports, []NamedPort{{"decode_bootstrap", 25201}}) || !reflect.DeepEqual(dec.Devices, []int{0}) {
		t.Errorf("decode process = %+v", dec)
	}
	if got := head.Processes[0].Ports; !reflect.DeepEqual(got, []NamedPort{{"api", 8091}, {"omni_master", 25201}, {"prefill_bootstrap", 25202}, {"edge_0_1", 25203}}) {
		t.Errorf("head process ports = %v", got)
	}
	if res.GPUCount != 2 || head.GPUCount != 1 || worker.GPUCount != 2 {
		t.Errorf("gpu counts: pipeline %d, head %d, worker %d; want the most any host needs (2), 1, 2", res.GPUCount, head.GPUCount, worker.GPUCount)
	}
	if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
		t.Errorf("planned config fails the checks: %v", errs)
	}
}
