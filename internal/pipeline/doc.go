// Package pipeline plans a vllm-omni pipeline with prefill-decode
// disaggregation: from a Spec (the user's inputs) it loads a base config,
// splits the chosen stage into a prefill and a decode stage, places every
// stage on GPUs, allocates ports, validates the result and renders the
// deploy config, the launch command and a diagram.
//
// Plan is a pure function of its Spec: no clock, no randomness, no map
// iteration order reaches its output, so Terraform can call it at every plan
// and get the same bytes. It never stops at the first problem: it collects
// every problem it can find in one pass, each with a stable code and the
// attribute path it concerns.
//
// Cost: BenchmarkPlanSeed measures a whole plan, and PERFORMANCE.md has
// the dated figures; the preset is parsed once per process, and the
// per-step benchmarks in bench_steps_test.go show where a regression comes
// from.
package pipeline
