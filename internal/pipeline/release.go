package pipeline

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// chooseRelease picks the vllm-omni release the plan is made for, and with
// it the output dialect and the `pipeline:` key. It runs once the layout
// knows the hosts, since a multi-host plan needs the stage-based launch.
// ok is false, with the problem reported, when no release runs the plan.
func (p *planner) chooseRelease() (c releases.Choice, ok bool) {
	need := releases.Need{
		Dialect:      string(requestedFormat(p.spec)),
		BaseDialect:  string(p.base.Dialect),
		BasePipeline: p.basePipeline(),
		Pipeline:     p.spec.Pipeline,
		MultiHost:    p.multiHost(),
		Connectors:   p.connectorClasses(),
	}
	if need.Dialect == "" && p.spec.Pipeline != "" {
		need.Dialect = releases.Stages // a pipeline key only exists in that dialect
	}
	if p.base.Dialect == stageconfig.Stages {
		_, need.ToStageArgs = p.topologyPreset()
		if need.Dialect == releases.StageArgs && !need.ToStageArgs {
			p.ds.errorf(diagcode.FormatConversionUnsupported, AttrPath("format"), "a stages-dialect base config cannot be written as stage_args here",
				"the stages dialect keeps the topology (model_stage, processors, final outputs) in vllm-omni's Python pipeline definitions, and no embedded preset with the same stage ids describes this pipeline; set format = \"stages\", set preset to the pipeline's preset, or pass a stage_args base config.")
			return releases.Choice{}, false
		}
	}
	c, problem := releases.Choose(p.spec.VLLMOmniVersion, need)
	if prev := p.spec.Previous; p.spec.VLLMOmniVersion == "" && prev != nil && prev.Release != "" {
		// Unset, the resource keeps the release it planned for while that
		// still runs the plan, as it keeps its ports.
		if kept, kp := releases.Choose(prev.Release, need); kp == nil && kept.UserPipeline == c.UserPipeline {
			c, problem = kept, nil
		}
	}
	if problem != nil {
		p.ds.errorf(diagcode.Code(problem.Code), AttrPath("vllm_omni_version"), problem.Summary, "%s", problem.Detail)
		return releases.Choice{}, false
	}
	if p.spec.Pipeline != "" && c.Dialect != releases.Stages {
		p.ds.errorf(diagcode.PipelineUnused, AttrPath("pipeline"), "pipeline applies to the stages dialect only",
			"the output is stage_args, which selects PD with the stages' own is_prefill_only / is_decode_only; remove pipeline, or set format = \"stages\".")
	}
	if c.UserPipeline {
		p.ds.warnf(diagcode.PipelineUserRegistered, AttrPath("pipeline"), "vllm-omni does not register this pipeline",
			"vllm-omni %s registers no pipeline %q; the deploy loader raises KeyError unless your own register_pipeline() call provides it, with its PD stages, before vllm serve starts.", c.Release.Version, c.PipelineKey)
	}
	if v := c.Release.Validator; v.Has(releases.CheckPrefillEntry) && (p.split.id != 0 || len(p.split.inputs) > 0) {
		path := AttrPath("split_stage")
		if p.spec.SplitStage == nil {
			path = p.basePath
		}
		p.ds.errorf(diagcode.SplitNotEntry, path, "the split stage is not the pipeline's first stage",
			"vllm-omni %s sends every request to stage 0 and holds the prefill stage to one token only there, but stage %d is split; split stage 0 (the thinker in vllm-omni's pipelines).", c.Release.Version, p.split.id)
	}
	return c, true
}

// basePipeline names the pipeline the base describes, for the registered
// PD variant: the preset, the base's `pipeline:` key, or the preset the
// model matches.
func (p *planner) basePipeline() string {
	if p.spec.Preset != "" {
		return p.spec.Preset
	}
	if key, _ := p.base.TopString("pipeline"); key != "" {
		return key
	}
	if p.spec.BaseConfig != "" {
		return ""
	}
	name, _ := presets.ForModel(p.spec.Model)
	return name
}

// connectorClasses are the KV connector classes the PD pair loads.
func (p *planner) connectorClasses() []string {
	out := []string{p.conn.name}
	for _, c := range p.conn.children {
		out = append(out, c.name)
	}
	return out
}

// configFlag is the `vllm serve` flag the release reads the output
// dialect through.
func (p *planner) configFlag() string {
	return p.release.Release.FlagFor(string(p.format))
}

// translateIgnoredKeys moves, in a stage_args output, what a stage sets
// under a key the release's runtime never reads to the key it does read
// (releases.StageArgsRuntime.Ignored). When the stage already sets that
// key, it wins and the ignored one goes. A value may change on the way
// (IgnoredKey.Value: the recipe's _token_only processors). A user's base
// config gets a warning for each key moved; the presets' are listed in the
// docs.
func (p *planner) translateIgnoredKeys(doc *stageconfig.Document) {
	rt := p.release.Release.StageArgs
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
			if p.spec.BaseConfig != "" && p.base.Dialect == stageconfig.StageArgs {
				p.ds.warnf(diagcode.IgnoredKeyTranslated, p.basePath, "a stage key vllm-omni never reads was translated",
					"%s: vllm-omni %s's stage_args runtime reads %s, not %s, so %s (%s).",
					st.Describe(), p.release.Release.Version, to, from, what, ig.Source)
			}
		}
	}
}
