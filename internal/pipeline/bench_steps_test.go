package pipeline

import (
	"crypto/sha256"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// Benchmarks of each step of Plan on the seed input (`model` and one
// reserved port, as scripts/bench.sh plans it), so that a change in one
// step shows up by name. Each benchmark times its step alone: the steps
// before it run once, outside the timer, and the step is called again and
// again with what they decided (a step changes none of its inputs).
// BenchmarkPlanSeed
// (bench_test.go) times the whole of Plan on the seed. Run with:
//   go test ./internal/pipeline -run '^$' -bench . -benchmem
// PERFORMANCE.md lists the figures.

// benchSpec is the seed input, with a reserved port as the harness sets one.
func benchSpec() Spec {
	return Spec{Model: seedModel, ReservedPorts: []int{30000}}
}

// benchBase loads the seed's base config and reads its graph, as readBase
// does.
func benchBase(b *testing.B) (Spec, baseConfig) {
	b.Helper()
	spec := benchSpec()
	var ds Diagnostics
	base, ok := readBase(spec, &ds)
	if !ok || ds.HasErrors() {
		b.Fatal(describeDiags(ds))
	}
	return spec, base
}

// benchLaid runs the steps of Plan up to the release on the seed,
// failing the benchmark on any error: the connector, the layout and the
// release the steps after them read.
func benchLaid(b *testing.B) (Spec, baseConfig, connector, stageLayout, releases.Choice) {
	b.Helper()
	spec, base := benchBase(b)
	var ds Diagnostics
	conn := chooseConnector(spec.Connector, &ds)
	split, ok := chooseSplit(base.g, spec.SplitStage, &ds)
	if !ok {
		b.Fatal(describeDiags(ds))
	}
	laid := layout(spec, base.g, split)
	release, _, ok := chooseRelease(spec, base, laid, conn, &ds)
	if !ok || ds.HasErrors() {
		b.Fatal(describeDiags(ds))
	}
	return spec, base, conn, laid, release
}

// benchDecided runs decide on the seed: everything Plan decides before it
// writes the config.
func benchDecided(b *testing.B) (Spec, decisions) {
	b.Helper()
	spec := benchSpec()
	var ds Diagnostics
	d, ok := decide(spec, &ds)
	if !ok {
		b.Fatal(describeDiags(ds))
	}
	return spec, d
}

// benchApplied returns the seed's decisions and its planned document,
// converted.
func benchApplied(b *testing.B) (Spec, decisions, *stageconfig.Document) {
	b.Helper()
	spec, d := benchDecided(b)
	doc, _, err := apply(spec.Connector, d.base, d.planned, d.conn, d.ports)
	if err != nil {
		b.Fatal(err)
	}
	var ds Diagnostics
	return spec, d, convert(doc, d.out, d.planned, &ds)
}

// BenchmarkStepCheckSpec: checkSpec, the checks of the inputs alone.
func BenchmarkStepCheckSpec(b *testing.B) {
	spec := benchSpec()
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		ds = ds[:0]
		checkSpec(spec, sandboxOf(spec.Service), &ds)
	}
}

// BenchmarkStepParse: parsing a base config's YAML, what base_config costs
// on every plan (the preset's own text, so the work equals the seed's).
func BenchmarkStepParse(b *testing.B) {
	src, err := presets.Source(presets.Qwen3OmniMoe)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stageconfig.Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepLoadPreset: loadBase on the seed, which copies the preset
// parsed once per process instead of parsing it.
func BenchmarkStepLoadPreset(b *testing.B) {
	spec := benchSpec()
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		if doc, _, _ := loadBase(spec, &ds); doc == nil {
			b.Fatal(describeDiags(ds))
		}
	}
}

// BenchmarkStepReadGraph: readGraph on the base config.
func BenchmarkStepReadGraph(b *testing.B) {
	_, base := benchBase(b)
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		readGraph(base.doc, &ds, base.path)
	}
}

// BenchmarkStepCheckBase: checkGraph on the base config's graph.
func BenchmarkStepCheckBase(b *testing.B) {
	_, base := benchBase(b)
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		ds = ds[:0]
		checkGraph(base.g, &ds, base.path, false)
	}
	if ds.HasErrors() {
		b.Fatal(describeDiags(ds))
	}
}

// BenchmarkStepSplit: chooseSplit and layout (ids, inputs, hosts and
// per-stage settings), and their checks.
func BenchmarkStepSplit(b *testing.B) {
	spec, base := benchBase(b)
	var ds Diagnostics
	conn := chooseConnector(spec.Connector, &ds)
	b.ReportAllocs()
	for b.Loop() {
		ds = ds[:0]
		if !checkNotSplit(base, &ds) {
			b.Fatal(describeDiags(ds))
		}
		split, ok := chooseSplit(base.g, spec.SplitStage, &ds)
		if !ok {
			b.Fatal(describeDiags(ds))
		}
		checkLayout(layout(spec, base.g, split), spec.StageOverrides, conn, &ds)
	}
}

// BenchmarkStepPlace: GPU placement and the GPU count and memory checks.
func BenchmarkStepPlace(b *testing.B) {
	spec, base, _, laid, _ := benchLaid(b)
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		ds = ds[:0]
		if checkWorldBounds(laid, base.path, &ds) {
			checkPlacement(laid, place(laid, spec.Previous, spec.GPUs), spec.GPUs, &ds)
		}
	}
}

// BenchmarkStepAllocatePorts: the API port and the connector ports.
func BenchmarkStepAllocatePorts(b *testing.B) {
	spec, base, conn, laid, release := benchLaid(b)
	stageBased := stageBasedLaunch(laid, release.Release)
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		ds = ds[:0]
		ports := allocatePorts(spec, base, laid, conn, release.Release.Handoff, stageBased)
		checkPorts(laid, conn, release.Release.Handoff, base.path, ports, &ds)
	}
}

// BenchmarkStepApply: apply, which edits a copy of the base node tree (the
// copy is part of the step).
func BenchmarkStepApply(b *testing.B) {
	spec, d := benchDecided(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := apply(spec.Connector, d.base, d.planned, d.conn, d.ports); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepPostCheck: readGraph and checkGraph on the planned config.
func BenchmarkStepPostCheck(b *testing.B) {
	_, _, doc := benchApplied(b)
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		ds = ds[:0]
		checkGraph(readGraph(doc, &ds, nil), &ds, nil, false)
	}
	if ds.HasErrors() {
		b.Fatal(describeDiags(ds))
	}
}

// BenchmarkStepRender: writing the planned node tree as YAML.
func BenchmarkStepRender(b *testing.B) {
	_, _, doc := benchApplied(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := doc.Render(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepLaunchDiagram: the serve command, the launches and their
// units, the health checks, the Mermaid
// diagram, the allocations and the content id: the rest of result().
func BenchmarkStepLaunchDiagram(b *testing.B) {
	spec, d, doc := benchApplied(b)
	res, err := result(spec, d, doc)
	if err != nil {
		b.Fatal(err)
	}
	config := []byte(res.ConfigYAML)
	b.ReportAllocs()
	for b.Loop() {
		if err := addLaunches(res, doc, launchInputsOf(spec, d)); err != nil {
			b.Fatal(err)
		}
		res.Diagram = diagram(d.planned, res.Edges, d.conn.name())
		res.Allocations = allocations(d.planned, d.ports.list, d.release.Release.Version)
		id := sha256.New()
		id.Write(config)
		res.ID = contentID(id, res)
	}
}
