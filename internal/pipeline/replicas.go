package pipeline

import (
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// A stage's replicas in a stage-based launch are its process's to start:
// each process launches --omni-dp-size-local replicas of its own stage (1
// unless given), and the head writes that over its own stage's
// num_replicas (_validate_single_stage_mode_replica_constraints,
// vllm_omni/engine/async_omni_engine.py@f92d84fc :475-505; run_headless,
// entrypoints/cli/serve.py@f92d84fc :685-727), while it expects the
// config's num_replicas of every other stage to register. So the process of
// a stage with num_replicas N > 1 is given --omni-dp-size-local N. A
// whole-pipeline process starts every stage's replicas from the config.

// checkReplicas refuses replicas the release cannot start in the plan's
// launch. Releases without --omni-dp-size-local (before 0.22.0, e277feac)
// run every plan stage by stage and cannot: 0.20.0 reads no num_replicas
// (vllm_omni@7f2b1e93 has none), and 0.21.0rc1's stage-based launch raises
// for an LLM stage with num_replicas > 1 (async_omni_engine.py@eb4e60ee
// :445-469) and would need one headless process per diffusion replica
// (run_headless --replica-id, serve.py@eb4e60ee :566), which a plan does
// not write. stageBased says whether release r runs the layout stage by
// stage (stageBasedLaunch).
func checkReplicas(lay stageLayout, r releases.Release, stageBased bool, basePath Path, ds *Diagnostics) {
	if !stageBased || r.StageCLI.Has(releases.FlagOmniDPSizeLocal) {
		return
	}
	for _, s := range lay.stages {
		if s.par.replicas <= 1 {
			continue
		}
		path := basePath
		if s.override != nil && s.override.NumReplicas != nil {
			path = s.path.Attr("num_replicas")
		}
		ds.errorf(diagcode.NumReplicasUnsupported, path, "this release cannot run the stage's replicas",
			"%s has num_replicas %d, but vllm-omni %s runs each stage of this plan as its own process, which starts one replica: it has no %s (vllm-omni 0.22.0 added it). Plan for vllm-omni 0.22.0 or later, or set num_replicas to 1.",
			s.describe(), s.par.replicas, r.Version, releases.FlagOmniDPSizeLocal)
	}
}

// stageReplicas reads each stage's num_replicas from the planned config,
// as vllm-omni does.
func stageReplicas(doc *stageconfig.Document) map[int]int {
	out := map[int]int{}
	for _, st := range doc.Stages() {
		if id, ok := st.ID(); ok {
			out[id] = st.NumReplicas()
		}
	}
	return out
}
