package pipeline

import (
	"crypto/sha256"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// Benchmarks of each step of Plan on the seed input (`model` and one
// reserved port, as scripts/bench.sh plans it), so that a change in one
// step shows up by name. Each benchmark times its step alone: the planner
// is brought to the state just before the step once, outside the timer,
// and the step is re-run on that state (every step timed here either
// rebuilds what it writes or is given a fresh planner). BenchmarkPlanSeed
// (bench_test.go) times the whole of Plan on the seed. Run with:
//   go test ./internal/pipeline -run '^$' -bench . -benchmem
// PERFORMANCE.md lists the figures.

// benchSpec is the seed input, with a reserved port as the harness sets one.
func benchSpec() Spec {
	return Spec{Model: seedModel, ReservedPorts: []int{30000}}
}

// benchPlanner runs the steps of Plan up to and including assemble,
// failing the benchmark on any error, and returns the planner.
func benchPlanner(b *testing.B) *planner {
	b.Helper()
	p := benchBase(b)
	var ok bool
	if p.split, ok = p.chooseSplit(); !ok {
		b.Fatal(describeDiags(p.ds))
	}
	p.laid = p.layout()
	p.checkLayout()
	if p.release, ok = p.chooseRelease(); !ok {
		b.Fatal(describeDiags(p.ds))
	}
	p.format = outputDialect(p.release, p.base.Dialect)
	devices := p.place()
	p.checkPlacement(devices)
	p.ports = p.allocatePorts()
	p.checkPorts(p.ports)
	if p.ds.HasErrors() {
		b.Fatal(describeDiags(p.ds))
	}
	p.planned = assemble(p.laid, devices, p.ports)
	return p
}

// benchBase runs newPlanner, loadBase and readGraph.
func benchBase(b *testing.B) *planner {
	b.Helper()
	p := newPlanner(benchSpec())
	p.base, p.basePath, p.preset = loadBase(p.spec, &p.ds)
	if p.base == nil {
		b.Fatal(describeDiags(p.ds))
	}
	p.g = readGraph(p.base, &p.ds, p.basePath)
	if p.ds.HasErrors() {
		b.Fatal(describeDiags(p.ds))
	}
	return p
}

// benchApplied returns the planner and the planned document, converted.
func benchApplied(b *testing.B) (*planner, *stageconfig.Document) {
	b.Helper()
	p := benchPlanner(b)
	doc, _, err := p.apply()
	if err != nil {
		b.Fatal(err)
	}
	return p, p.convert(doc)
}

// BenchmarkStepCheckSpec: checkSpec, the checks of the inputs alone.
func BenchmarkStepCheckSpec(b *testing.B) {
	p := &planner{spec: benchSpec()}
	b.ReportAllocs()
	for b.Loop() {
		p.ds = p.ds[:0]
		p.checkSpec()
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
	p := benchBase(b)
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		readGraph(p.base, &ds, p.basePath)
	}
}

// BenchmarkStepCheckBase: checkGraph on the base config's graph.
func BenchmarkStepCheckBase(b *testing.B) {
	p := benchBase(b)
	var ds Diagnostics
	b.ReportAllocs()
	for b.Loop() {
		ds = ds[:0]
		checkGraph(p.g, &ds, p.basePath, false)
	}
	if ds.HasErrors() {
		b.Fatal(describeDiags(ds))
	}
}

// BenchmarkStepSplit: chooseSplit and layout (ids, inputs, hosts and
// per-stage settings), on a fresh planner each time.
func BenchmarkStepSplit(b *testing.B) {
	base := benchBase(b)
	b.ReportAllocs()
	for b.Loop() {
		p := &planner{spec: base.spec, base: base.base, basePath: base.basePath, g: base.g, conn: base.conn}
		var ok bool
		if !p.checkNotSplit() {
			b.Fatal(describeDiags(p.ds))
		}
		if p.split, ok = p.chooseSplit(); !ok {
			b.Fatal(describeDiags(p.ds))
		}
		p.laid = p.layout()
		p.checkLayout()
	}
}

// BenchmarkStepPlace: GPU placement and the GPU count and memory checks.
func BenchmarkStepPlace(b *testing.B) {
	p := benchPlanner(b)
	b.ReportAllocs()
	for b.Loop() {
		p.ds = p.ds[:0]
		if p.checkWorldBounds() {
			p.checkPlacement(p.place())
		}
	}
}

// BenchmarkStepAllocatePorts: the API port and the connector ports.
func BenchmarkStepAllocatePorts(b *testing.B) {
	p := benchPlanner(b)
	b.ReportAllocs()
	for b.Loop() {
		p.ds = p.ds[:0]
		p.checkPorts(p.allocatePorts())
	}
}

// BenchmarkStepApply: apply, which edits a copy of the base node tree (the
// copy is part of the step).
func BenchmarkStepApply(b *testing.B) {
	p := benchPlanner(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.apply(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepPostCheck: readGraph and checkGraph on the planned config.
func BenchmarkStepPostCheck(b *testing.B) {
	_, doc := benchApplied(b)
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
	_, doc := benchApplied(b)
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
	p, doc := benchApplied(b)
	res, err := p.result(doc)
	if err != nil {
		b.Fatal(err)
	}
	config := []byte(res.ConfigYAML)
	b.ReportAllocs()
	for b.Loop() {
		if err := addLaunches(res, doc, p.launchInputs()); err != nil {
			b.Fatal(err)
		}
		res.Diagram = p.diagram(res)
		res.Allocations = p.allocations()
		id := sha256.New()
		id.Write(config)
		res.ID = contentID(id, res)
	}
}
