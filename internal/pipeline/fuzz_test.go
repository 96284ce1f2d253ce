package pipeline

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// The fuzz targets drive Plan, Check and the step functions they reach with
// shared seeds; they stay together here rather than beside each step.

// fuzzSeeds are the base configs the fuzz targets start from: the
// upstream copies, the presets and the hand-written fixtures.
func fuzzSeeds(f *testing.F) []string {
	files, err := filepath.Glob(filepath.Join(localConfigs, "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files in %s: %v", localConfigs, err)
	}
	var out []string
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, string(b))
	}
	for _, name := range presets.Names() {
		b, err := presets.Source(name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, string(b))
	}
	// Upstream's deploy configs too, where they are (../shared).
	upstream, _ := filepath.Glob(filepath.Join(sharedConfigs, "deploy", "*.yaml"))
	for _, p := range upstream {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, string(b))
		}
	}
	// Bases read through YAML 1.1's rules: merge keys, yes/on, hex, and a
	// commented flow list.
	yaml11 := strings.NewReplacer("final_output: true", "final_output: yes", "engine_input_source: [0]", "engine_input_source: [0x0]  # c").Replace(miniBase)
	return append(out, miniBase, pdConfig, encoderFirstBase, stagesPlatformBase, mergedBase, yaml11)
}

// FuzzPlanBaseConfig plans arbitrary base configs with a few knobs. Plan
// must never panic; a plan it returns must be consistent: no errors, a
// config that parses and passes the planner's own graph checks.
func FuzzPlanBaseConfig(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, int8(-1), uint8(i%3), uint8(1), uint8(1), false)
	}
	f.Fuzz(func(t *testing.T, base string, split int8, conn, ptp, dtp uint8, stages bool) {
		spec := Spec{
			Model:      seedModel,
			BaseConfig: base,
			Prefill:    RoleSpec{TensorParallelSize: ptr(int(ptp%5) + 1)},
			Decode:     RoleSpec{TensorParallelSize: ptr(int(dtp%5) + 1)},
			Connector:  ConnectorSpec{Name: []string{"", "NixlConnector", "MultiConnector"}[conn%3]},
		}
		// Mooncake alone fails the handoff gate; as a MultiConnector child
		// beside NIXL its wiring plans.
		if spec.Connector.Name == "MultiConnector" {
			spec.Connector.ExtraConfig = map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}
		}
		if split >= 0 {
			spec.SplitStage = ptr(int(split))
		}
		if stages {
			spec.Format = "stages"
		}
		res, ds := Plan(spec)
		if ds.HasErrors() {
			if res != nil {
				t.Fatal("Plan returned a result with errors")
			}
			for _, d := range ds {
				if d.Code.String() == "" || d.Summary == "" {
					t.Fatalf("diagnostic without code or summary: %+v", d)
				}
				if d.Code.String() == "render_failed" {
					t.Fatalf("the planner accepted a base it cannot render: %s", d)
				}
				if d.Code.String() == "release_conformance" {
					t.Fatalf("the planner wrote what its release refuses: %s", d)
				}
			}
			return
		}
		if res == nil {
			t.Fatal("no result and no error")
		}
		if ds := Check([]byte(res.ConfigYAML)); hasCodeAny(ds, "config_unreadable") {
			t.Fatalf("planned config does not parse: %v\n%s", ds, res.ConfigYAML)
		}
		conformsToRelease(t, spec, res)
		again, _ := Plan(spec)
		if again == nil || again.ConfigYAML != res.ConfigYAML {
			t.Fatal("a second plan of the same spec differs")
		}
	})
}

// conformsToRelease reads a plan back as machines get it and runs its
// release's conformance checks on it.
func conformsToRelease(t *testing.T, spec Spec, res *Result) {
	t.Helper()
	doc, err := stageconfig.Parse([]byte(res.ConfigYAML))
	if err != nil {
		t.Fatalf("planned config does not parse: %v", err)
	}
	rel, problem := releases.Lookup(res.Release)
	if problem != nil {
		t.Fatalf("the plan names release %q: %s", res.Release, problem.Detail)
	}
	if vs := releases.Conform(rel, deploymentOf(doc, res.Stages, res.Launches, spec.Pipeline != "")); len(vs) > 0 {
		t.Fatalf("vllm-omni %s would refuse the plan: %v\n%s", rel.Version, vs, res.ConfigYAML)
	}
}

// FuzzCheck runs Check and Inspect on arbitrary text: no panic, and a
// config Inspect cannot read is exactly one Check reports as unreadable.
func FuzzCheck(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, src string, version uint8) {
		ds := Check([]byte(src))
		_, err := Inspect([]byte(src))
		if unreadable := hasCodeAny(ds, "config_unreadable"); unreadable != (err != nil) {
			t.Fatalf("Check unreadable=%t but Inspect err=%v", unreadable, err)
		}
		// With any release of the table, the release's checks only add.
		v := releases.Table[int(version)%len(releases.Table)].Version
		if withRelease := CheckFor([]byte(src), v); len(withRelease) < len(ds) {
			t.Fatalf("CheckFor %s found %d problems, Check %d", v, len(withRelease), len(ds))
		}
	})
}

// FuzzPlanKnobs varies the numeric inputs of the seed spec. Plan must not
// panic or stall (an absurd tensor_parallel_size once made it build a
// device list millions long), and a plan it returns must keep its own
// promises: distinct ports outside reserved_ports and off 50051, disjoint
// prefill and decode GPUs, device counts equal to the parallel sizes,
// devices below gpus, and a config that passes Check.
func FuzzPlanKnobs(f *testing.F) {
	f.Add(int16(1), int16(1), int16(-1), int16(-1), int32(0), int32(0), int32(0), int16(0), int32(0), uint8(0), false, uint8(0), uint8(0))
	f.Add(int16(2), int16(2), int16(0), int16(2), int32(8091), int32(25201), int32(25210), int16(5), int32(25201), uint8(1), false, uint8(3), uint8(1))
	f.Add(int16(1), int16(4), int16(-1), int16(-1), int32(50051), int32(50050), int32(50052), int16(6), int32(50050), uint8(1), true, uint8(9), uint8(2))
	f.Add(int16(30000), int16(1), int16(3), int16(3), int32(-1), int32(70000), int32(1), int16(-3), int32(0), uint8(2), true, uint8(1), uint8(3))
	f.Add(int16(1), int16(1), int16(-1), int16(-1), int32(0), int32(0), int32(0), int16(0), int32(0), uint8(3), false, uint8(0), uint8(1))
	f.Add(int16(2), int16(2), int16(-1), int16(-1), int32(0), int32(25201), int32(25220), int16(0), int32(0), uint8(2), true, uint8(5), uint8(1))
	f.Fuzz(func(t *testing.T, ptp, dtp, pdev, ddev int16, api, first, last int32, gpus int16, reserved int32, conn uint8, kvBoth bool, version, hosts uint8) {
		spec := knobsSpec(ptp, dtp, pdev, ddev, conn, kvBoth, version, hosts)
		if api != 0 {
			spec.APIPort = ptr(int(api))
		}
		if first != 0 || last != 0 {
			spec.PortRange = &PortRange{First: int(first), Last: int(last)}
		}
		if gpus != 0 {
			spec.GPUs = ptr(int(gpus))
		}
		if reserved != 0 {
			spec.ReservedPorts = []int{int(reserved), int(reserved) + 2}
		}
		res, ds := Plan(spec)
		if spec.Connector.Name == "MooncakeConnector" && res != nil {
			t.Fatalf("MooncakeConnector planned; it fails every PD request: %v", ds)
		}
		if ds.HasErrors() {
			if res != nil {
				t.Fatal("a result with errors")
			}
			if hasCodeAny(ds, "release_conformance") {
				t.Fatalf("the planner wrote what its release refuses: %v", ds)
			}
			return
		}
		conformsToRelease(t, spec, res)
		checkKnobsPorts(t, spec, res)
		checkKnobsDevices(t, spec, res)
		if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
			t.Fatalf("the planned config fails Check: %v\n%s", errs, res.ConfigYAML)
		}
	})
}

// knobsSpec is FuzzPlanKnobs's spec from its parallel sizes, devices,
// connector, release and host layout.
func knobsSpec(ptp, dtp, pdev, ddev int16, conn uint8, kvBoth bool, version, hosts uint8) Spec {
	spec := Spec{
		Model:     seedModel,
		Prefill:   RoleSpec{TensorParallelSize: ptr(int(ptp))},
		Decode:    RoleSpec{TensorParallelSize: ptr(int(dtp))},
		Connector: ConnectorSpec{Name: []string{"", "NixlConnector", "MultiConnector", "MooncakeConnector"}[conn%4], KVBoth: kvBoth},
	}
	// Mooncake's wiring plans as a MultiConnector child beside NIXL;
	// alone it fails the handoff gate.
	if spec.Connector.Name == "MultiConnector" {
		spec.Connector.ExtraConfig = map[string]any{"connectors": []any{
			map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}
	}
	// Any release of the table, or the default; one host, or the PD
	// pair and the rest spread over two.
	if v := int(version) % (len(releases.Table) + 1); v > 0 {
		spec.VLLMOmniVersion = releases.Table[v-1].Version
	}
	switch hosts % 4 {
	case 1:
		spec.Prefill.Host, spec.Decode.Host = "10.0.0.1", "10.0.0.2"
	case 2:
		spec.Prefill.Host, spec.Decode.Host = "10.0.0.1", "10.0.0.1"
		spec.StageOverrides = map[string]StageOverride{"code2wav": {Host: "10.0.0.3"}}
	case 3:
		spec.Prefill.Host = "10.0.0.1"
	}
	spec.Prefill.Devices, spec.Decode.Devices = knobsDevices(pdev, ptp), knobsDevices(ddev, dtp)
	return spec
}

// knobsDevices is n devices from start (at least one, at most eight), or
// none for a negative start.
func knobsDevices(start, n int16) []int {
	if start < 0 {
		return nil
	}
	out := []int{}
	for i := int16(0); i < min(max(n, 1), 8); i++ {
		out = append(out, int(start)+int(i))
	}
	return out
}

// checkKnobsPorts: distinct ports per host, in range, off the connector's
// ZMQ base port and outside reserved_ports.
func checkKnobsPorts(t *testing.T, spec Spec, res *Result) {
	t.Helper()
	seen := map[string]string{}
	for _, p := range res.Ports {
		key := fmt.Sprintf("%s/%d", p.Host, p.Port)
		if prev, dup := seen[key]; dup {
			t.Fatalf("port %d is %s and %s on host %q", p.Port, prev, p.Name, p.Host)
		}
		seen[key] = p.Name
		if p.Port < 1 || p.Port > 65535 || p.Port == connectorZMQBasePort {
			t.Fatalf("port %s = %d", p.Name, p.Port)
		}
		if slices.Contains(spec.ReservedPorts, p.Port) {
			t.Fatalf("port %s = %d is reserved", p.Name, p.Port)
		}
	}
}

// checkKnobsDevices: device counts equal the parallel sizes, devices lie
// below gpus, and prefill and decode on one host share none.
func checkKnobsDevices(t *testing.T, spec Spec, res *Result) {
	t.Helper()
	var pre, dec []int
	var preHost, decHost string
	for _, s := range res.Stages {
		switch s.Role {
		case RolePrefill:
			pre, preHost = s.Devices, s.Host
		case RoleDecode:
			dec, decHost = s.Devices, s.Host
		}
		if s.Role != RoleStage && len(s.Devices) != s.TensorParallelSize {
			t.Fatalf("%s has %d devices for TP %d", s.Role, len(s.Devices), s.TensorParallelSize)
		}
		for _, d := range s.Devices {
			if spec.GPUs != nil && d >= *spec.GPUs {
				t.Fatalf("stage %d on device %d with gpus = %d", s.StageID, d, *spec.GPUs)
			}
		}
	}
	if preHost == decHost && len(intersect(pre, dec)) > 0 {
		t.Fatalf("prefill %v and decode %v overlap", pre, dec)
	}
}

// FuzzCanonicalHost: any string is an address in canonical form, whose
// canonical form is itself, or a reason it is not one; never a panic.
func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "::ffff:10.0.0.1", "fd00:0000::0001", "FD00::2", "0.0.0.0", "::", "fe80::1%eth0", "10.0.0.1:8080", "[::1]:80", "gpu-0.internal", "999.999.999.999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		c, why := canonicalHost(h)
		if (c == "") == (why == "") {
			t.Fatalf("%q: canonical %q, reason %q: exactly one must be set", h, c, why)
		}
		if c != "" {
			if again, _ := canonicalHost(c); again != c {
				t.Fatalf("%q: canonical %q is not its own canonical form (%q)", h, c, again)
			}
		}
	})
}

// FuzzPlanConverges is plan → apply → plan as the resource runs it: a plan
// made with the allocations of the plan before it is that same plan. A
// resource whose keys were ambiguous swapped devices on every apply.
func FuzzPlanConverges(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint8(i), false)
	}
	f.Add(strings.Replace(miniBase, "model_stage: talker", "model_stage: decode", 1), uint8(1), true)
	f.Fuzz(func(t *testing.T, base string, knobs uint8, hosts bool) {
		spec := Spec{Model: seedModel, BaseConfig: base}
		if knobs%2 == 1 {
			spec.Prefill.TensorParallelSize, spec.Decode.TensorParallelSize = ptr(2), ptr(2)
		}
		if hosts {
			spec.Prefill.Host, spec.Decode.Host = "10.0.0.1", "10.0.0.2"
		}
		first, _ := Plan(spec)
		if first == nil {
			return
		}
		for i := 0; i < 2; i++ {
			spec.Previous = &first.Allocations
			again, ds := Plan(spec)
			if again == nil {
				t.Fatalf("a plan with its own allocations fails: %v", ds)
			}
			if again.ID != first.ID || !reflect.DeepEqual(again.Stages, first.Stages) || !reflect.DeepEqual(again.Ports, first.Ports) {
				t.Fatalf("plan %d with the previous allocations differs:\nstages %v\nwant   %v", i+2, again.Stages, first.Stages)
			}
			first = again
		}
	})
}

// FuzzPlanParallel: any parallel sizes through engine_args and any replica
// count, around PD devices anywhere, either plan with every stage on as
// many devices as its sizes multiply to, no downstream stage on the PD
// pair's GPUs and a config that passes Check, or fail with errors; never a
// panic, never a wrapped-around product.
func FuzzPlanParallel(f *testing.F) {
	f.Add(int64(1), int64(1), int64(1), int64(1), int64(1), int64(1), int16(-1), int16(-1), uint8(0))
	f.Add(int64(2), int64(2), int64(1), int64(1), int64(2), int64(1), int16(0), int16(2), uint8(0))
	f.Add(int64(1), int64(1), int64(2), int64(2), int64(1), int64(3), int16(1), int16(3), uint8(1))
	f.Add(int64(math.MaxInt32), int64(math.MaxInt32), int64(1), int64(1), int64(1), int64(1), int16(-1), int16(-1), uint8(2))
	f.Add(int64(-1), int64(0), int64(1)<<40, int64(1), int64(math.MaxInt64), int64(2), int16(0), int16(1), uint8(3))
	f.Fuzz(func(t *testing.T, ppP, ppD, dpP, dpD, dpTalker, replicas int64, pdev, ddev int16, gpus uint8) {
		args := func(pp, dp int64) map[string]any {
			return map[string]any{"pipeline_parallel_size": pp, "data_parallel_size": dp}
		}
		spec := Spec{
			Model:   seedModel,
			Prefill: RoleSpec{EngineArgs: args(ppP, dpP)},
			Decode:  RoleSpec{EngineArgs: args(ppD, dpD)},
			StageOverrides: map[string]StageOverride{
				"talker": {EngineArgs: map[string]any{"data_parallel_size": dpTalker}, NumReplicas: ptr(int(max(min(replicas, MaxWhole), -MaxWhole)))},
			},
		}
		if pdev >= 0 {
			spec.Prefill.Devices = []int{int(pdev)}
		}
		if ddev >= 0 {
			spec.Decode.Devices = []int{int(ddev)}
		}
		if gpus > 0 {
			spec.GPUs = ptr(int(gpus))
		}
		res, ds := Plan(spec)
		if ds.HasErrors() {
			if res != nil {
				t.Fatal("a result with errors")
			}
			return
		}
		pd := map[int]bool{}
		for _, s := range res.Stages {
			if s.Role != RoleStage {
				for _, d := range s.Devices {
					pd[d] = true
				}
			}
		}
		for _, s := range res.Stages {
			want := int64(s.TensorParallelSize)
			switch s.Role {
			case RolePrefill:
				want *= ppP * dpP
			case RoleDecode:
				want *= ppD * dpD
			}
			if s.Role != RoleStage && int64(len(s.Devices)) != want {
				t.Fatalf("%s has %d devices, its sizes multiply to %d", s.Role, len(s.Devices), want)
			}
			// The talker's base size is 1: its devices are its data
			// parallel size times its replicas (a count below 1 comes only
			// from a Spec built by hand, which DecodeStageOverrides refuses,
			// and leaves the base's one replica).
			if want := dpTalker * max(replicas, 1); s.ModelStage == "talker" && replicas <= MaxWhole && int64(len(s.Devices)) != want {
				t.Fatalf("talker has %d devices for data_parallel_size %d × num_replicas %d", len(s.Devices), dpTalker, replicas)
			}
			if s.Role == RoleStage {
				for _, d := range s.Devices {
					if pd[d] {
						t.Fatalf("%s (stage %d) is on GPU %d of the PD pair", s.ModelStage, s.StageID, d)
					}
				}
			}
		}
		if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
			t.Fatalf("the planned config fails Check: %v\n%s", errs, res.ConfigYAML)
		}
	})
}

// FuzzDecodeStageOverrides: any number in any setting decodes to a value
// within the typed attributes' bounds or to an error at its path.
func FuzzDecodeStageOverrides(f *testing.F) {
	f.Add(int64(8), 0.5, int64(2), int64(1), 1.0)
	f.Add(int64(math.MaxInt64), math.Inf(1), int64(math.MinInt64), int64(1)<<40, math.NaN())
	f.Add(int64(-1), 1e-400, int64(0), int64(-1), 1e300)
	f.Fuzz(func(t *testing.T, seqs int64, mem float64, dev, replicas int64, asFloat float64) {
		raw := map[string]any{"talker": map[string]any{
			"max_num_seqs": seqs, "gpu_memory_utilization": mem, "devices": []any{dev, asFloat}, "num_replicas": replicas,
		}}
		got, ds := DecodeStageOverrides(raw)
		o := got["talker"]
		bounded := func(p *int) {
			if p != nil && (*p > MaxWhole || *p < -MaxWhole) {
				t.Fatalf("decoded %d beyond ±%d", *p, MaxWhole)
			}
		}
		bounded(o.MaxNumSeqs)
		bounded(o.NumReplicas)
		for _, d := range o.Devices {
			bounded(&d)
		}
		for _, d := range ds {
			if !strings.HasPrefix(d.Path.String(), "stage_overrides.talker") {
				t.Fatalf("a problem at %s", d.Path)
			}
		}
		// Each setting is decoded or has a problem at its path: none is
		// dropped without a word.
		reported := func(key string) bool {
			for _, d := range ds {
				if strings.HasPrefix(d.Path.String(), "stage_overrides.talker."+key) {
					return true
				}
			}
			return false
		}
		for key, decoded := range map[string]bool{
			"max_num_seqs": o.MaxNumSeqs != nil, "gpu_memory_utilization": o.GPUMemoryUtilization != nil,
			"devices": o.Devices != nil, "num_replicas": o.NumReplicas != nil,
		} {
			if !decoded && !reported(key) {
				t.Fatalf("%s was dropped without a problem", key)
			}
		}
	})
}
