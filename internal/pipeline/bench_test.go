package pipeline

import (
	"testing"
)

// Plan runs at every terraform plan for every pipeline in a configuration,
// so its cost is worth watching. These time whole plans and Check; the
// per-step benchmarks are in bench_steps_test.go.

func BenchmarkPlanSeed(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res, ds := Plan(Spec{Model: seedModel}); res == nil {
			b.Fatal(ds)
		}
	}
}

func BenchmarkPlanUserBaseConfig(b *testing.B) {
	spec := Spec{Model: seedModel, BaseConfig: readLocal(b, legacyQwen3Multi)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res, ds := Plan(spec); res == nil {
			b.Fatal(ds)
		}
	}
}

func BenchmarkPlanStagesFormat(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res, ds := Plan(Spec{Model: seedModel, Format: "stages", Pipeline: "qwen3_omni_moe_pd", VLLMOmniVersion: "0.28.0"}); res == nil {
			b.Fatal(ds)
		}
	}
}

func BenchmarkCheckPlannedConfig(b *testing.B) {
	res, ds := Plan(Spec{Model: seedModel})
	if res == nil {
		b.Fatal(ds)
	}
	src := []byte(res.ConfigYAML)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Check(src)
	}
}
