package pipeline

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// chooseRelease picks the vllm-omni release the plan is made for, and with
// it the output: its dialect, its `pipeline:` key and, for a stages base
// written as stage_args, the preset stages each stage takes its topology
// from (nil otherwise). It runs once the layout knows the hosts, since a
// multi-host plan needs the stage-based launch. ok is false, with the
// problem reported, when no release runs the plan.
func chooseRelease(spec Spec, base baseConfig, lay stageLayout, conn connector, ds *Diagnostics) (c releases.Choice, out output, ok bool) {
	need, topology, ok := releaseNeed(spec, base, lay, conn, ds)
	if !ok {
		return releases.Choice{}, output{}, false
	}
	c, problem := releases.Choose(spec.VLLMOmniVersion, need)
	if prev := spec.Previous; spec.VLLMOmniVersion == "" && prev != nil && prev.Release != "" {
		// Unset, the resource keeps the release it planned for while that
		// still runs the plan, as it keeps its ports.
		if kept, kp := releases.Choose(prev.Release, need); kp == nil && kept.Native() == c.Native() {
			c, problem = kept, nil
		}
	}
	if problem != nil {
		ds.errorf(problem.Code, AttrPath("vllm_omni_version"), problem.Summary, "%s", problem.Detail)
		return releases.Choice{}, output{}, false
	}
	checkHandoffGate(conn, c.Release, ds)
	checkChoice(spec, base.path, lay.split, c, ds)
	return c, output{dialect: outputDialect(c, base.doc.Dialect), pipeline: c.PipelineKey, topology: topology}, true
}

// releaseNeed is what the plan needs of a release, and the preset stages
// that give a stages base its topology when written as stage_args (nil
// for a stage_args base). ok is false, with the problem reported, when
// the format asked for cannot be written.
func releaseNeed(spec Spec, base baseConfig, lay stageLayout, conn connector, ds *Diagnostics) (releases.Need, map[int]stageconfig.Stage, bool) {
	need := releases.Need{
		Dialect:      string(requestedFormat(spec)),
		BaseDialect:  string(base.doc.Dialect),
		BasePipeline: basePipeline(base),
		Pipeline:     spec.Pipeline,
		MultiHost:    lay.multiHost(),
		Connectors:   conn.classes(),
		Processors:   releases.ProcessorsOf(base.doc),
		Definition:   registrationDefinition(base),
		AfterPair:    afterPair(lay),
		ThinkerOnly:  thinkerOnlyPreset(lay.split),
	}
	if need.Dialect == "" && spec.Pipeline != "" {
		need.Dialect = releases.Stages // a pipeline key only exists in that dialect
	}
	if base.doc.Dialect != stageconfig.Stages {
		return need, nil, true
	}
	topology, found := topologyPreset(spec, base)
	need.ToStageArgs = found
	// Written as stage_args, each stage takes its processor from the
	// preset's stage with its id (toStageArgs).
	for _, id := range sortedKeys(topology) {
		if ref, ok := releases.ProcessorOf(topology[id]); ok {
			need.Processors = append(need.Processors, ref)
		}
	}
	if need.Dialect == releases.StageArgs && !need.ToStageArgs {
		ds.errorf(diagcode.FormatConversionUnsupported, AttrPath("format"), "a stages-dialect base config cannot be written as stage_args here",
			"the stages dialect keeps the topology (model_stage, processors, final outputs) in vllm-omni's Python pipeline definitions, and no embedded preset with the same stage ids describes this pipeline; set format = \"stages\", set preset to the pipeline's preset, or pass a stage_args base config.")
		return need, nil, false
	}
	return need, topology, true
}

// checkChoice reports what the chosen release c says of the plan: a row
// whose code was not read, a pipeline key it does not write or register,
// and a split stage its validator does not take as the prefill stage.
func checkChoice(spec Spec, basePath Path, split graphStage, c releases.Choice, ds *Diagnostics) {
	if r := c.Release; r.Commit == "" {
		ds.warnf(diagcode.ReleaseRowUnread, AttrPath("vllm_omni_version"), "this release's code was not read at its own commit",
			"vllm-omni %s: %s Check the plan against that release before you rely on it, or target a release whose code was read (%s).", r.Version, r.Unread, strings.Join(releases.ReadVersions(), ", "))
	}
	if spec.Pipeline != "" && c.Dialect != releases.Stages {
		ds.errorf(diagcode.PipelineUnused, AttrPath("pipeline"), "pipeline applies to the stages dialect only",
			"the output is stage_args, which selects PD with the stages' own is_prefill_only / is_decode_only; remove pipeline, or set format = \"stages\".")
	}
	if c.UserPipeline {
		how := "unless your own register_pipeline() call provides it, with its PD stages, before vllm serve starts"
		if c.Release.Registry != nil {
			how = fmt.Sprintf("unless your module %s registers it, with the PD flags in its stages' %s: each process imports it before vllm-omni's CLI runs, from %s or else Python's path, and refuses to start when it registers no prefill-decode pair",
				c.PipelineKey, c.Release.Registry.PDFlags, registrationPath(spec.Service, c.PipelineKey))
		}
		ds.warnf(diagcode.PipelineUserRegistered, AttrPath("pipeline"), "vllm-omni does not register this pipeline",
			"vllm-omni %s registers no pipeline %q; the deploy loader raises KeyError %s.", c.Release.Version, c.PipelineKey, how)
	}
	if v := c.Release.Validator; v.Has(releases.CheckPrefillEntry) && (split.id != 0 || len(split.inputs) > 0) {
		path := AttrPath("split_stage")
		if spec.SplitStage == nil {
			path = basePath
		}
		ds.errorf(diagcode.SplitNotEntry, path, "the split stage is not the pipeline's first stage",
			"vllm-omni %s sends every request to stage 0 and holds the prefill stage to one token only there, but stage %d is split; split stage 0 (the thinker in vllm-omni's pipelines).", c.Release.Version, split.id)
	}
}

// checkHandoffGate: the PD pair's connector must return the
// remote_request_id the release's orchestrator needs of every PD request
// (releases.HandoffGate), or every request fails once the server is up.
func checkHandoffGate(conn connector, r releases.Release, ds *Diagnostics) {
	if conn.childrenRefused {
		return // the children are refused where they are written
	}
	classes := conn.classes()
	why := r.Handoff.Failure(classes[0], classes[1:])
	if why == "" {
		return
	}
	ds.errorf(diagcode.ConnectorHandoffGate, AttrPath("connector", "name"), "this KV connector fails every PD request",
		"vllm-omni %s's orchestrator sends a request on to decode only when prefill's kv_transfer_params carry remote_request_id, and raises otherwise (%s); %s. Use %s (the default), or MultiConnector with a %s child.",
		r.Version, r.Handoff.Source, why, DefaultConnector, DefaultConnector)
}

// basePipeline names the pipeline the base describes, for the registered
// PD variant: the preset loaded, or the base's `pipeline:` key.
func basePipeline(base baseConfig) string {
	if base.preset != "" {
		return base.preset
	}
	key, _ := base.doc.TopString("pipeline")
	return key
}

// translateIgnoredKeys moves, in a stage_args output, what a stage sets
// under a key the runtime of release r never reads to the key it does read
// (releases.StageArgsRuntime.Ignored). When the stage already sets that
// key, it wins and the ignored one goes. A value may change on the way
// (IgnoredKey.Value: the recipe's _token_only processors). A user's base
// config gets a warning for each key moved; the presets' are listed in the
// docs.
func translateIgnoredKeys(doc *stageconfig.Document, r releases.Release, base baseConfig, ds *Diagnostics) {
	rt := r.StageArgs
	if rt == nil || doc.Dialect != stageconfig.StageArgs {
		return
	}
	for _, st := range doc.Stages() {
		for _, ig := range rt.Ignored {
			done, text, newText := st.TranslateKey(ig.Key, ig.ReadAs, ig.Value)
			if done == stageconfig.NotSet {
				continue
			}
			from, to := strings.Join(ig.Key, "."), strings.Join(ig.ReadAs, ".")
			var what string
			switch done {
			case stageconfig.TargetKept:
				what = fmt.Sprintf("%s is removed and %s, which the stage also sets, is kept", from, to)
			case stageconfig.Renamed:
				what = fmt.Sprintf("%s: %s is written as %s: %s", from, text, to, newText)
			case stageconfig.Moved:
				what = fmt.Sprintf("%s: %s is written as %s", from, text, to)
			}
			// Only what the user wrote is reported: a preset's keys, or the
			// topology a preset gave a stages base, are in the docs.
			if base.user() && base.doc.Dialect == stageconfig.StageArgs {
				ds.warnf(diagcode.IgnoredKeyTranslated, base.path, "a stage key vllm-omni never reads was translated",
					"%s: vllm-omni %s's stage_args runtime reads %s, not %s, so %s (%s).",
					st.Describe(), r.Version, to, from, what, ig.Source)
			}
		}
	}
}

// requiredKeyDefaults are what the stage_args stage init assumed for a key
// before a release stopped defaulting it (releases.Release.RequiredStageKeys):
// an empty runtime, no inputs, not a final output, no output type, not
// the comprehension stage.
var requiredKeyDefaults = map[string]any{
	"runtime":             map[string]any{},
	"engine_input_source": []any{},
	"final_output":        false,
	"final_output_type":   nil,
	"is_comprehension":    false,
}

// writeRequiredKeys writes, in a stage_args output, each key the stage
// init of release r reads with no default on every stage that leaves it
// out, with the value the stage init used to assume, so that the stage
// starts as it did on the releases before.
func writeRequiredKeys(doc *stageconfig.Document, r releases.Release, ds *Diagnostics) {
	keys := r.RequiredStageKeys.Names
	if doc.Dialect != stageconfig.StageArgs || len(keys) == 0 {
		return
	}
	for _, st := range doc.Stages() {
		for _, k := range keys {
			v, known := requiredKeyDefaults[k]
			if !known {
				continue // TestRequiredKeysHaveDefaults holds the table to the map
			}
			if _, err := st.WriteIfAbsent(k, v); err != nil {
				ds.errorf(diagcode.RenderFailed, nil, "the deploy config cannot be written", "%s: %v", st.Describe(), err)
			}
		}
	}
}
