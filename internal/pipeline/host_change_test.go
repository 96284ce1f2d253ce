package pipeline

import (
	"math/rand"
	"reflect"
	"testing"
)

// Hosts a stage may be planned on in the host-change tests: none (a single
// host that names no address) and three machines.
var changeHosts = []string{"", "10.0.0.1", "10.0.0.2", "10.0.0.3"}

// hostSpec is the seed pipeline with prefill, decode, talker and code2wav
// on the given hosts ("" leaves a stage's host unset: decode then follows
// prefill, the others decode). knobs varies what else the plan has: the
// connector's ports, a release without a master port on one host, tensor
// parallelism.
func hostSpec(hosts [4]string, knobs uint8) Spec {
	s := Spec{Model: seedModel, Prefill: RoleSpec{Host: hosts[0]}, Decode: RoleSpec{Host: hosts[1]}}
	if hosts[2] != "" || hosts[3] != "" {
		s.StageOverrides = map[string]StageOverride{"talker": {Host: hosts[2]}, "code2wav": {Host: hosts[3]}}
	}
	if knobs&1 != 0 {
		s.Connector = ConnectorSpec{Name: connectorMulti, ExtraConfig: map[string]any{"connectors": []any{
			map[string]any{"kv_connector": connectorNixl}, map[string]any{"kv_connector": connectorMooncake}}}}
	}
	if knobs&2 != 0 {
		s.VLLMOmniVersion = "0.22.0" // one process on one host: no master port until a host is added
	}
	if knobs&4 != 0 {
		s.Prefill.TensorParallelSize, s.Decode.TensorParallelSize = ptr(2), ptr(2)
	}
	return s
}

// sameMachine is the test's own reading of the rule that matches hosts
// across two plans: the same address is the same machine, and a single
// host that names no address is the other plan's head.
func sameMachine(prevHost, prevHead, host, head string) bool {
	if prevHost == host {
		return true
	}
	return prevHost == prevHead && host == head && (prevHost == "" || host == "")
}

// checkHostChange plans before, then after with before's allocations, and
// checks the resource's promise across a change of hosts: every port and
// every stage's devices that stay on the same machine are kept (nothing
// else changed, so each is still valid there), and what an earlier plan
// chose on another machine changes nothing: the plan is the one made with
// only the same-machine history.
func checkHostChange(t *testing.T, before, after Spec) bool {
	t.Helper()
	first, _ := Plan(before)
	if first == nil {
		return false
	}
	after.Previous = &first.Allocations
	second, ds := Plan(after)
	if second == nil {
		fresh := after
		fresh.Previous = nil
		if res, _ := Plan(fresh); res != nil {
			t.Fatalf("%v -> %v: plans afresh but not with the earlier allocations:\n%s", hostsOf(first), hostsOf(fresh.plan(t)), describeDiags(ds))
		}
		return false
	}
	prevHead, head := first.Stages[0].Host, second.Stages[0].Host
	same := func(k HostKey, host string) bool { return sameMachine(k.Host, prevHead, host, head) }

	prevPort := map[string]HostKey{}
	for k := range first.Allocations.Ports {
		prevPort[k.Name] = k
	}
	for _, p := range second.Ports {
		if k, ok := prevPort[p.Name]; ok && same(k, p.Host) && first.Allocations.Ports[k] != p.Port {
			t.Errorf("%v -> %v: %s stays on %q but moves from %d to %d", hostsOf(first), hostsOf(second), p.Name, p.Host, first.Allocations.Ports[k], p.Port)
		}
	}
	prevDev := map[string]HostKey{}
	for k := range first.Allocations.Devices {
		prevDev[k.Name] = k
	}
	keys := DeviceKeys(second.Stages)
	for i, s := range second.Stages {
		if k, ok := prevDev[keys[i]]; ok && same(k, s.Host) && !reflect.DeepEqual(first.Allocations.Devices[k], s.Devices) {
			t.Errorf("%v -> %v: %s stays on %q but moves from GPUs %v to %v", hostsOf(first), hostsOf(second), keys[i], s.Host, first.Allocations.Devices[k], s.Devices)
		}
	}

	// History from another machine changes nothing.
	kept := &Allocations{Ports: map[HostKey]int{}, Devices: map[HostKey][]int{}, Head: prevHead, Release: first.Allocations.Release}
	hostOfKey := map[string]string{}
	for _, p := range second.Ports {
		hostOfKey["port:"+p.Name] = p.Host
	}
	for i, s := range second.Stages {
		hostOfKey["dev:"+keys[i]] = s.Host
	}
	for k, v := range first.Allocations.Ports {
		if h, ok := hostOfKey["port:"+k.Name]; ok && same(k, h) {
			kept.Ports[k] = v
		}
	}
	for k, v := range first.Allocations.Devices {
		if h, ok := hostOfKey["dev:"+k.Name]; ok && same(k, h) {
			kept.Devices[k] = v
		}
	}
	after.Previous = kept
	third := mustPlan(t, after)
	if third.ID != second.ID || !reflect.DeepEqual(third.Ports, second.Ports) || !reflect.DeepEqual(third.Stages, second.Stages) {
		t.Errorf("%v -> %v: allocations from other hosts changed the plan:\nports %v\nwant  %v", hostsOf(first), hostsOf(second), portList(second), portList(third))
	}
	return true
}

func (s Spec) plan(t *testing.T) *Result { t.Helper(); return mustPlan(t, s) }

func hostsOf(r *Result) []string {
	var out []string
	for _, s := range r.Stages {
		out = append(out, s.Host)
	}
	return out
}

// TestHostChangeKeepsOnlySameHost: the property over changes of hosts,
// from and to one unnamed host, one named host and two or three, with
// the connector, release and parallelism knobs. The pairs are drawn with
// a fixed seed, so the test is the same on every run.
func TestHostChangeKeepsOnlySameHost(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	pick := func() [4]string {
		var h [4]string
		for i := range h {
			h[i] = changeHosts[rng.Intn(len(changeHosts))]
		}
		return h
	}
	planned := 0
	for i := 0; i < 600; i++ {
		knobs := uint8(rng.Intn(8))
		if checkHostChange(t, hostSpec(pick(), knobs), hostSpec(pick(), knobs)) {
			planned++
		}
	}
	if planned < 300 {
		t.Errorf("only %d of 600 host changes planned: the sample tests too little", planned)
	}
}

// FuzzHostChange is the same property over any two host assignments.
func FuzzHostChange(f *testing.F) {
	f.Add(uint8(0), uint8(0x15), uint8(0)) // one unnamed host -> prefill 10.0.0.1, decode 10.0.0.2
	f.Add(uint8(0x55), uint8(0xf5), uint8(1))
	f.Add(uint8(0xa5), uint8(0x5a), uint8(2))
	f.Fuzz(func(t *testing.T, a, b, knobs uint8) {
		hosts := func(x uint8) [4]string {
			return [4]string{changeHosts[x&3], changeHosts[x>>2&3], changeHosts[x>>4&3], changeHosts[x>>6&3]}
		}
		checkHostChange(t, hostSpec(hosts(a), knobs&7), hostSpec(hosts(b), knobs&7))
	})
}

// The two host changes of issue 23, by their numbers: adding a host keeps
// the head's ports and GPUs and gives the stages that move to the new host
// that host's lowest free ones; moving stages to a new host does not carry
// their old host's GPU indices there.
func TestHostChangeExamples(t *testing.T) {
	const a, b, c = "10.0.0.1", "10.0.0.2", "10.0.0.3"
	type want struct {
		ports    []string
		devices  []string // per stage
		gpuCount map[string]int
	}
	tests := []struct {
		name          string
		before, after [4]string
		want          want
	}{
		{"adding a host to a one-host pipeline", [4]string{}, [4]string{a, b},
			want{[]string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25201", "omni_master=25203", "edge_0_1=25202"},
				[]string{"0", "0", "1", "1"}, map[string]int{a: 1, b: 2}}},
		{"adding a host to a named host", [4]string{a}, [4]string{a, b},
			want{[]string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25201", "omni_master=25203", "edge_0_1=25202"},
				[]string{"0", "0", "1", "1"}, map[string]int{a: 1, b: 2}}},
		{"moving the downstream stages to a new host", [4]string{a, b}, [4]string{a, b, c, c},
			want{[]string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25201", "omni_master=25202", "edge_0_1=25203", "edge_1_2=25202"},
				[]string{"0", "0", "0", "0"}, map[string]int{a: 1, b: 1, c: 1}}},
		{"moving decode to a new host", [4]string{a}, [4]string{a, c, a, a},
			want{[]string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25201", "omni_master=25203", "edge_0_1=25202", "edge_1_2=25202"},
				[]string{"0", "0", "2", "2"}, map[string]int{a: 3, c: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := mustPlan(t, hostSpec(tc.before, 0))
			after := hostSpec(tc.after, 0)
			after.Previous = &first.Allocations
			res := mustPlan(t, after)
			if got := portList(res); !reflect.DeepEqual(got, tc.want.ports) {
				t.Errorf("ports = %v, want %v", got, tc.want.ports)
			}
			if got := configDevices(t, res); !reflect.DeepEqual(got, tc.want.devices) {
				t.Errorf("devices = %v, want %v", got, tc.want.devices)
			}
			gpus := map[string]int{}
			for _, l := range res.Launches {
				gpus[l.Host] = l.GPUCount
			}
			if !reflect.DeepEqual(gpus, tc.want.gpuCount) {
				t.Errorf("gpu_count by host = %v, want %v", gpus, tc.want.gpuCount)
			}
			checkHostChange(t, hostSpec(tc.before, 0), hostSpec(tc.after, 0))
		})
	}
}
