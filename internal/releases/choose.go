package releases

import (
	"fmt"
	"slices"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// Need is what a plan asks of a release.
type Need struct {
	// Dialect is the output dialect the user asked for; "" lets the
	// release decide: stage_args wherever it reads that dialect and the
	// base can be written in it, else stages.
	Dialect string
	// BaseDialect is the dialect of the base config.
	BaseDialect string
	// ToStageArgs is true when a `stages` base can be written as
	// stage_args (an embedded preset gives its topology).
	ToStageArgs bool
	// BasePipeline is the pipeline the base describes (a preset name, or
	// the base's `pipeline:` key), to look up a registered PD variant.
	BasePipeline string
	// Pipeline is the `pipeline:` key the user named, "" when none.
	Pipeline string
	// MultiHost is true when the stages run on more than one host.
	MultiHost bool
	// Connectors are the KV connector classes the PD pair loads
	// (MultiConnector and each of its children).
	Connectors []string
	// Processors are the input processors the base's stages name, under
	// the key each names it (custom_process_input_func, or a key the
	// stage_args runtime translates, such as sync_process_input_func).
	Processors []ProcessorRef
	// Definition is the release's own pipeline the base describes, from
	// which a registration the plan writes takes its stages; "" when the
	// base describes none the provider knows.
	Definition string
	// AfterPair is true when stages follow the PD pair (a talker): they
	// need an input processor that hands them prefill's and decode's
	// embeddings together.
	AfterPair bool
	// ThinkerOnly names the preset of the model's thinker alone, for the
	// advice when a release serves prefill-decode for the thinker only;
	// "" when there is none.
	ThinkerOnly string
}

// ProcessorRef is one stage key that names an input processor function.
type ProcessorRef struct {
	Key, Value string
}

// processorKeys are the stage keys that name an input processor in either
// dialect: the one the stage_args runtime reads, and the pipelines' own.
var processorKeys = []string{"custom_process_input_func", "sync_process_input_func"}

// ProcessorsOf lists the input processors a config's stages name: the
// first key of processorKeys a stage sets, since the key the runtime reads
// wins over one it would translate.
func ProcessorsOf(doc *stageconfig.Document) []ProcessorRef {
	var out []ProcessorRef
	for _, st := range doc.Stages() {
		if ref, ok := ProcessorOf(st); ok {
			out = append(out, ref)
		}
	}
	return out
}

// ProcessorOf is the input processor one stage names, if any.
func ProcessorOf(st stageconfig.Stage) (ProcessorRef, bool) {
	for _, k := range processorKeys {
		if v, ok := st.String(k); ok && v != "" {
			return ProcessorRef{Key: k, Value: v}, true
		}
	}
	return ProcessorRef{}, false
}

// processorOn is the function a stage_args stage runs on r for ref: the
// value itself under custom_process_input_func, the value a translated key
// becomes, or "" when r reads nothing under that key.
func processorOn(r Release, ref ProcessorRef) string {
	const read = "custom_process_input_func"
	if ref.Key == read {
		return ref.Value
	}
	if r.StageArgs == nil {
		return ""
	}
	for _, ig := range r.StageArgs.Ignored {
		if len(ig.Key) == 1 && ig.Key[0] == ref.Key && len(ig.ReadAs) == 1 && ig.ReadAs[0] == read {
			return ig.Value(ref.Value)
		}
	}
	return ""
}

// Choice is a release and how a plan runs on it.
type Choice struct {
	Release Release
	Dialect string
	// PipelineKey is the `pipeline:` key the `stages` output names; "" in
	// stage_args.
	PipelineKey string
	// UserPipeline is true when that key is the user's own registration,
	// which the release does not have: the plan is written but PD depends
	// on code outside vllm-omni.
	UserPipeline bool
	// Registration is true when the plan writes the pipeline registration
	// itself (Release.WritesRegistration), from the release's definition
	// of Need.Definition; the plan names the key from the registration's
	// content, so PipelineKey is "".
	Registration bool
}

// Native reports whether the release runs the plan's PD with nothing but
// its own code: no registration, the plan's or the user's.
func (c Choice) Native() bool { return !c.UserPipeline && !c.Registration }

// dialectOn is the output dialect a plan takes on r.
func (n Need) dialectOn(r Release) string {
	if n.Dialect != "" {
		return n.Dialect
	}
	if r.Reads(StageArgs) && (n.BaseDialect == StageArgs || n.ToStageArgs) {
		return StageArgs
	}
	return Stages
}

// evaluate says how a plan runs on r, and every reason it does not run PD
// there natively (its own loader and validator, no registration of the
// user's). A Choice with UserPipeline set and no reasons runs only with the
// user's registration; one with Registration set, on the registration the
// plan writes.
func (n Need) evaluate(r Release) (Choice, []string) {
	c := Choice{Release: r, Dialect: n.dialectOn(r)}
	var why []string
	if n.Dialect == "" && c.Dialect == Stages && n.BaseDialect == StageArgs && !r.WritesRegistration() {
		why = append(why, "it no longer loads stage_args configs, the dialect of this base")
	}
	switch c.Dialect {
	case StageArgs:
		why = append(why, n.stageArgsProblems(r)...)
	case Stages:
		why = append(why, n.stagesChoice(r, &c)...)
	}
	if n.MultiHost && !r.StageBased() {
		why = append(why, "it has no stage-based launch (--stage-id, --headless) to run stages on several hosts")
	}
	for _, name := range n.Connectors {
		if !r.KVConnectors.Has(name) {
			why = append(why, "it cannot load "+name)
		}
	}
	return c, why
}

// stageArgsProblems are why r does not run the plan's PD in a stage_args
// output: the loader, the runtime, the base, the input processors.
func (n Need) stageArgsProblems(r Release) []string {
	var why []string
	switch {
	case !r.Reads(StageArgs):
		why = append(why, "it cannot load a stage_args config")
	case r.StageArgs == nil || !r.StageArgs.GenericPD:
		why = append(why, "its stage_args runtime has no PD")
	case n.BaseDialect == Stages && !n.ToStageArgs:
		why = append(why, "this stages base config has no embedded preset to write it as stage_args")
	}
	var missing []string
	for _, ref := range n.Processors {
		fn := processorOn(r, ref)
		if known, present := r.Processors.Lookup(fn); fn != "" && known && !present && !slices.Contains(missing, fn) {
			missing = append(missing, fn)
		}
	}
	if len(missing) > 0 {
		why = append(why, "it has no input processor "+strings.Join(missing, ", ")+" ("+r.Processors.Source+")")
	}
	return why
}

// stagesChoice sets in c the `pipeline:` a stages output names on r (the
// release's, the user's, or the registration the plan writes) and says
// why none runs the plan's PD.
func (n Need) stagesChoice(r Release, c *Choice) []string {
	registered := r.PDPipeline(n.BasePipeline)
	switch {
	case !r.Reads(Stages):
		return []string{"it cannot load a stages config"}
	case n.Pipeline != "" && n.Pipeline != registered:
		c.PipelineKey, c.UserPipeline = n.Pipeline, true
	case registered != "":
		c.PipelineKey = registered
	case r.WritesRegistration():
		c.Registration = true
		return n.registrationProblems(r)
	default:
		return []string{"it registers no PD pipeline for " + describePipeline(n.BasePipeline) + " in the stages dialect"}
	}
	return nil
}

// registrationProblems are why the plan cannot write the registration of
// its PD pipeline for r: stages after the pair that no processor of r
// serves, or no definition of r's to write it from.
func (n Need) registrationProblems(r Release) []string {
	if n.afterPairUnserved(r) {
		return []string{"no input processor of it hands the stages after the prefill-decode pair (the talker) prefill's and decode's embeddings together (" +
			r.MergedPDEmbeddings.Source + "), so prefill-decode there runs the thinker alone, text out"}
	}
	if _, ok := r.Registry.Definition(n.Definition); !ok {
		return []string{"it registers no PD pipeline for " + describePipeline(n.BasePipeline) + ", and the provider knows no pipeline of it that this base describes to write the registration from"}
	}
	return nil
}

// afterPairUnserved is true when the plan would write r's registration for
// a pipeline with stages after the PD pair, which no processor of r
// serves.
func (n Need) afterPairUnserved(r Release) bool {
	return n.AfterPair && r.WritesRegistration() && n.Pipeline == "" && !r.MergesPDEmbeddings()
}

func describePipeline(p string) string {
	if p == "" {
		return "this base config"
	}
	return p
}

// Problem is why a version cannot serve a plan: an error on
// vllm_omni_version, or on the whole plan when no version was given.
type Problem struct {
	Code    diagcode.Code
	Summary string
	Detail  string
}

// Choose resolves the user's version (empty for the default) against the
// table for a plan that needs n.
//
// Unset, the version is the newest final release on which the plan runs
// PD natively (a release candidate only when no final release does). A
// plan that names its own pipeline registration runs natively nowhere; it
// gets the newest final release that loads it, and a warning from the
// planner. Set, it must name a release in the table (a line picks its
// newest final release, or its newest release candidate when the line has
// no final one) on which the plan runs PD, natively or through the
// pipeline key the user registers.
func Choose(version string, n Need) (Choice, *Problem) {
	if version == "" {
		// Final releases first: pip installs no release candidate unless
		// asked, so a default that named one would match no machine.
		for _, foreign := range []bool{false, true} {
			for _, finalOnly := range []bool{true, false} {
				for i := len(Table) - 1; i >= 0; i-- {
					if finalOnly && Table[i].V().RC > 0 {
						continue
					}
					if c, why := n.evaluate(Table[i]); len(why) == 0 && !c.Native() == foreign {
						return c, nil
					}
				}
			}
		}
		return Choice{}, &Problem{Code: diagcode.ReleaseNone, Summary: "no vllm-omni release runs this plan's PD natively",
			Detail: "none of the releases this provider knows (" + describeTable() + ") loads this plan and runs its prefill/decode pair without code of your own. " +
				n.fix() + " If your machines register a PD pipeline themselves, name it in pipeline (with format = \"stages\") and set vllm_omni_version to the release they run."}
	}
	v, err := ParseVersion(version)
	if err != nil {
		return Choice{}, &Problem{Code: diagcode.ReleaseMalformed, Summary: "vllm_omni_version is not a version", Detail: err.Error() + ". " + n.working()}
	}
	r, p := lookup(v)
	if p != nil {
		p.Detail += " " + n.working()
		return Choice{}, p
	}
	c, why := n.evaluate(r)
	if len(why) > 0 && n.afterPairUnserved(r) {
		return Choice{}, &Problem{Code: diagcode.PDThinkerOnly, Summary: "this vllm-omni release runs prefill-decode for the thinker alone",
			Detail: fmt.Sprintf("vllm-omni %s cannot run this plan: %s. %s", r.Version, strings.Join(why, "; "), n.thinkerOnlyFix())}
	}
	if len(why) > 0 {
		hint := ""
		if n.Pipeline == "" && c.Dialect == Stages && r.Reads(Stages) {
			hint = " To run it there anyway, set format = \"stages\" and name in pipeline a PD pipeline your machines register themselves."
		}
		return Choice{}, &Problem{Code: diagcode.ReleaseNoPD, Summary: "this vllm-omni release cannot run the plan's PD",
			Detail: fmt.Sprintf("vllm-omni %s cannot run this plan: %s. %s%s", r.Version, strings.Join(why, "; "), n.working(), hint)}
	}
	return c, nil
}

// Lookup resolves a version the user wrote to its table row, as Choose
// does, without judging a plan.
func Lookup(version string) (Release, *Problem) {
	v, err := ParseVersion(version)
	if err != nil {
		return Release{}, &Problem{Code: diagcode.ReleaseMalformed, Summary: "not a vllm-omni version", Detail: err.Error() + "."}
	}
	return lookup(v)
}

// lookup finds the table row a parsed version names.
func lookup(v Version) (Release, *Problem) {
	first, last := Table[0].V(), Newest().V()
	var best *Release
	for i := range Table {
		r := Table[i]
		if !r.V().Matches(v) {
			continue
		}
		// A line takes its newest final release, else its newest rc.
		if best == nil || betterInLine(r.V(), best.V()) {
			best = &Table[i]
		}
	}
	if best != nil {
		return *best, nil
	}
	switch {
	case lineBefore(v, first):
		return Release{}, &Problem{Code: diagcode.ReleaseBeforePD, Summary: "this vllm-omni release predates PD",
			Detail: fmt.Sprintf("vllm-omni %s is older than %s, the first release with prefill-decode disaggregation.", v, first)}
	case lineAfter(v, last):
		return Release{}, &Problem{Code: diagcode.ReleaseUnknownNewer, Summary: "this vllm-omni release is newer than the provider knows",
			Detail: fmt.Sprintf("vllm-omni %s is newer than %s, the newest release this provider's table describes; what it reads cannot be checked. Use a known release, or a provider version that knows it.", v, last)}
	}
	return Release{}, &Problem{Code: diagcode.ReleaseUnknown, Summary: "no such vllm-omni release",
		Detail: fmt.Sprintf("vllm-omni %s is not a release this provider knows (%s).", v, describeTable())}
}

func betterInLine(a, b Version) bool {
	if (a.RC == 0) != (b.RC == 0) {
		return a.RC == 0
	}
	return a.Compare(b) > 0
}

func lineBefore(v, first Version) bool {
	return v.Major < first.Major || v.Major == first.Major && v.Minor < first.Minor ||
		v.HasPatch && v.Line() == first.Line() && v.Compare(first) < 0
}

func lineAfter(v, last Version) bool {
	return v.Major > last.Major || v.Major == last.Major && v.Minor > last.Minor ||
		v.HasPatch && v.Line() == last.Line() && v.Compare(last) > 0
}

// working lists the releases on which the plan would run, natively or with
// the user's registration.
func (n Need) working() string {
	var ok []string
	for _, r := range Table {
		if _, why := n.evaluate(r); len(why) == 0 {
			ok = append(ok, r.Version)
		}
	}
	if len(ok) == 0 {
		return "No release this provider knows runs this plan's PD. " + n.fix()
	}
	return "Set vllm_omni_version to a release that runs this plan: " + strings.Join(ok, ", ") + "."
}

// thinkerOnlyFix says how to run a plan whose stages after the PD pair a
// release cannot serve: the thinker alone there, or the whole pipeline
// where it runs natively.
func (n Need) thinkerOnlyFix() string {
	ask := "Ask for the thinker alone (a base_config with the thinker only; text out)"
	if n.ThinkerOnly != "" {
		ask = "Ask for the thinker alone (preset = \"" + n.ThinkerOnly + "\", or a base_config with the thinker only; text out)"
	}
	whole := n
	whole.Dialect, whole.Pipeline = "", ""
	var native []string
	for _, r := range Table {
		if c, why := whole.evaluate(r); len(why) == 0 && c.Native() {
			native = append(native, r.Version)
		}
	}
	if len(native) == 0 {
		return ask + "; no release this provider knows runs this whole pipeline's prefill-decode."
	}
	return ask + ", or set vllm_omni_version to a release that runs the whole pipeline's prefill-decode: " + strings.Join(native, ", ") + "."
}

// fix says what to change when no release runs the plan.
func (n Need) fix() string {
	// A connector no release's vLLM loads is the cause on every row, not
	// the dialect.
	var unloadable []string
	for _, name := range n.Connectors {
		loaded := false
		for _, r := range Table {
			loaded = loaded || r.KVConnectors.Has(name)
		}
		if !loaded {
			unloadable = append(unloadable, name)
		}
	}
	if len(unloadable) > 0 {
		return "No release's vLLM loads the KV connector " + strings.Join(unloadable, ", ") + "; name a connector the release table lists."
	}
	var out []string
	if n.Dialect == Stages || n.dialectOn(Newest()) == Stages {
		out = append(out, "the stages dialect runs PD only through a registered pipeline, and no release registers one for "+describePipeline(n.BasePipeline)+
			": use a stage_args base (or format = \"stage_args\") on a release that reads it, or name your own registration in pipeline")
	}
	if n.MultiHost {
		out = append(out, "a multi-host plan needs a release with the stage-based launch")
	}
	if len(out) == 0 {
		return "Check the connector and the hosts against the release table in the provider's docs."
	}
	s := strings.Join(out, "; ") + "."
	return strings.ToUpper(s[:1]) + s[1:]
}

func describeTable() string {
	return Table[0].Version + " to " + Newest().Version
}

// Newest is the table's newest row. Code, tests and generated pages that
// mean "the newest release" ask for it, so a new row moves them all.
func Newest() Release { return Table[len(Table)-1] }

// NewestFinal is the table's newest row that is not a release candidate.
func NewestFinal() Release {
	for i := len(Table) - 1; i >= 0; i-- {
		if Table[i].V().RC == 0 {
			return Table[i]
		}
	}
	panic("the release table has no final release")
}

// Beyond names two versions just past the table, which no row matches and
// which resolve to release_unknown_newer: the line after the newest row's
// ("0.33" past 0.32.0) and the next patch on the newest row's line
// ("0.32.1"). Tests of "newer than the table" use them, so they stay newer
// when a row is added.
func Beyond() (line, patch string) {
	v := Newest().V()
	line = Version{Major: v.Major, Minor: v.Minor + 1}.String()
	patch = Version{Major: v.Major, Minor: v.Minor, Patch: v.Patch + 1, HasPatch: true}.String()
	return line, patch
}

// ReadVersions lists the releases whose code was read at their own
// commit, oldest first.
func ReadVersions() []string {
	var out []string
	for _, r := range Table {
		if r.Commit != "" {
			out = append(out, r.Version)
		}
	}
	return out
}

// Versions lists every release in the table, oldest first.
func Versions() []string {
	out := make([]string, len(Table))
	for i, r := range Table {
		out[i] = r.Version
	}
	return out
}
