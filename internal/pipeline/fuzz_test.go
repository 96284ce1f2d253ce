package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
)

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
	return append(out, miniBase, pdConfig, encoderFirstBase, stagesPlatformBase)
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
			Connector:  ConnectorSpec{Name: []string{"", "NixlConnector", "MooncakeConnector"}[conn%3]},
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
				if d.Code == "" || d.Summary == "" {
					t.Fatalf("diagnostic without code or summary: %+v", d)
				}
				if d.Code == "render_failed" {
					t.Fatalf("the planner accepted a base it cannot render: %s", d)
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
		again, _ := Plan(spec)
		if again == nil || again.ConfigYAML != res.ConfigYAML {
			t.Fatal("a second plan of the same spec differs")
		}
	})
}

func hasCodeAny(ds Diagnostics, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// FuzzCheck runs Check and Inspect on arbitrary text: no panic, and a
// config Inspect cannot read is exactly one Check reports as unreadable.
func FuzzCheck(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ds := Check([]byte(src))
		_, err := Inspect([]byte(src))
		if unreadable := hasCodeAny(ds, "config_unreadable"); unreadable != (err != nil) {
			t.Fatalf("Check unreadable=%t but Inspect err=%v", unreadable, err)
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
	f.Add(int16(1), int16(1), int16(-1), int16(-1), int32(0), int32(0), int32(0), int16(0), int32(0), uint8(0), false)
	f.Add(int16(2), int16(2), int16(0), int16(2), int32(8091), int32(25201), int32(25210), int16(5), int32(25201), uint8(1), false)
	f.Add(int16(1), int16(4), int16(-1), int16(-1), int32(50051), int32(50050), int32(50052), int16(6), int32(50050), uint8(1), true)
	f.Add(int16(30000), int16(1), int16(3), int16(3), int32(-1), int32(70000), int32(1), int16(-3), int32(0), uint8(2), true)
	f.Fuzz(func(t *testing.T, ptp, dtp, pdev, ddev int16, api, first, last int32, gpus int16, reserved int32, conn uint8, kvBoth bool) {
		spec := Spec{
			Model:     seedModel,
			Prefill:   RoleSpec{TensorParallelSize: ptr(int(ptp))},
			Decode:    RoleSpec{TensorParallelSize: ptr(int(dtp))},
			Connector: ConnectorSpec{Name: []string{"", "NixlConnector", "MooncakeConnector"}[conn%3], KVBoth: kvBoth},
		}
		devs := func(start, n int16) []int {
			if start < 0 {
				return nil
			}
			out := []int{}
			for i := int16(0); i < min(max(n, 1), 8); i++ {
				out = append(out, int(start)+int(i))
			}
			return out
		}
		spec.Prefill.Devices, spec.Decode.Devices = devs(pdev, ptp), devs(ddev, dtp)
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
		if ds.HasErrors() {
			if res != nil {
				t.Fatal("a result with errors")
			}
			return
		}
		seen := map[int]string{}
		for _, p := range res.Ports {
			if prev, dup := seen[p.Port]; dup {
				t.Fatalf("port %d is %s and %s", p.Port, prev, p.Name)
			}
			seen[p.Port] = p.Name
			if p.Port < 1 || p.Port > 65535 || p.Port == connectorZMQBasePort {
				t.Fatalf("port %s = %d", p.Name, p.Port)
			}
			for _, r := range spec.ReservedPorts {
				if p.Port == r {
					t.Fatalf("port %s = %d is reserved", p.Name, p.Port)
				}
			}
		}
		var pre, dec []int
		for _, s := range res.Stages {
			switch s.Role {
			case RolePrefill:
				pre = s.Devices
			case RoleDecode:
				dec = s.Devices
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
		if len(intersect(pre, dec)) > 0 {
			t.Fatalf("prefill %v and decode %v overlap", pre, dec)
		}
		if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
			t.Fatalf("the planned config fails Check: %v\n%s", errs, res.ConfigYAML)
		}
	})
}
