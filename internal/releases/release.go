// Package releases says what each vllm-omni release reads, runs and checks
// when it starts a pipeline: which config dialect it loads through which
// `vllm serve` flag, which stage keys its runtime reads, whether
// prefill-decode (PD) disaggregation runs there and in which dialect, what
// its PD validator refuses, which stage-based launch flags and KV
// connectors it has. The table (table.go) is data with the upstream source
// of each fact beside it; conformance.go checks a planned config and its
// launch lines against one row.
//
// The package has no Terraform imports.
package releases

import (
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
)

// Dialect names, as stageconfig spells them.
const (
	StageArgs = "stage_args"
	Stages    = "stages"
)

// Launch flags of `vllm serve --omni` that name a config file.
const (
	FlagStageConfigsPath = "--stage-configs-path"
	FlagDeployConfig     = "--deploy-config"
)

// Stage-based launch flags (one OS process per stage).
const (
	FlagStageID           = "--stage-id"
	FlagHeadless          = "--headless"
	FlagOmniMasterAddress = "--omni-master-address"
	FlagOmniMasterPort    = "--omni-master-port"
	FlagOmniReplicaAddr   = "--omni-replica-address"
	FlagOmniDPSizeLocal   = "--omni-dp-size-local"
)

// Release is one row of the table: one vllm-omni release and what it does
// with a PD deploy config.
type Release struct {
	Version string // exact release: "0.24.0", "0.27.0rc1"
	Date    string // release date, YYYY-MM-DD
	VLLM    string // the vLLM major.minor it needs ("0.24")
	Source  string // where the version, date and vLLM pin come from
	// Commit is the upstream main commit the row's code facts were read
	// at: the release's own "Rebase to vLLM X" commit, or main's last
	// commit before its tag. "" when it could not be established; then
	// Unread says why and which commit's facts the row carries forward,
	// and a plan for the row warns.
	Commit string
	Unread string

	// Loaders are the config files `vllm serve --omni` reads, each with
	// the flag that reaches its loader.
	Loaders []Loader
	// StageArgs describes the `stage_args` runtime; nil when the release
	// cannot load that dialect.
	StageArgs *StageArgsRuntime
	// Deploy describes the `stages` deploy loader; nil before it existed.
	Deploy *DeployLoader
	// Validator is what the release's PD validator refuses at startup.
	Validator Validator
	// StageCLI lists the stage-based launch flags `vllm serve` accepts.
	StageCLI Facts
	// KVConnectors lists the KV connectors the release (through the vLLM it
	// needs) can load for the PD pair.
	KVConnectors Facts
	// Handoff is the orchestrator's KV handoff gate: what a PD request
	// needs from the prefill's output before decode can start.
	Handoff HandoffGate
	// StageEnv says whether a stage's runtime.env reaches the engine that
	// runs it when several stages share one `vllm serve` process.
	StageEnv StageEnvFact
	// Processors are the input processor functions present in the
	// stage_input_processors modules a plan may name.
	Processors ProcessorFacts
	// RequiredStageKeys are stage keys the stage_args stage init reads
	// with no default: a stage without one fails at start.
	RequiredStageKeys Facts
	// Registry is the release's pipeline registry, which a registration
	// (the plan's or the user's) is imported into before the CLI runs;
	// nil before it existed.
	Registry *Registry
	// MergedPDEmbeddings are the input processors that hand the stages
	// after the PD pair prefill's and decode's embeddings together.
	MergedPDEmbeddings Facts
	// Notes say what the row could not pin down and which side it took.
	Notes string
}

// HandoffGate is the check vllm-omni's orchestrator makes before it sends
// a PD request on to decode: the prefill output's kv_transfer_params must
// carry remote_request_id, or the request fails.
type HandoffGate struct {
	// Required is true when the orchestrator fails a request without it.
	Required bool
	// Passing are the KV connectors whose scheduler-side request_finished
	// returns remote_request_id on the vLLM the release needs.
	// MultiConnector merges its children's params, so it passes when one
	// child does.
	Passing Facts
	Source  string
}

// Passes reports whether a connector (with its MultiConnector children)
// hands decode what the gate needs.
func (g HandoffGate) Passes(connector string, children []string) bool {
	if !g.Required {
		return true
	}
	if connector == MultiConnector {
		for _, c := range children {
			if g.Passing.Has(c) {
				return true
			}
		}
		return false
	}
	return g.Passing.Has(connector)
}

// Failure says why a connector fails the gate, "" when it passes: the
// words both the planner's error and the conformance check use.
func (g HandoffGate) Failure(connector string, children []string) string {
	switch {
	case g.Passes(connector, children):
		return ""
	case connector == MultiConnector:
		return "no child of this MultiConnector (" + strings.Join(children, ", ") + ") returns remote_request_id"
	}
	return connector + " returns no remote_request_id"
}

// MultiConnector is vLLM's connector that runs several others.
const MultiConnector = kvconnector.Multi

// StageEnvFact says how a stage's runtime.env reaches its engine.
type StageEnvFact struct {
	// Applied is true when a whole-pipeline `vllm serve` applies each
	// stage's runtime.env to that stage's engine. A headless stage process
	// never applies it in any release read: there the process environment
	// is the only carrier.
	Applied bool
	Source  string
}

// ProcessorFacts are the functions of the stage_input_processors modules
// as a release ships them.
type ProcessorFacts struct {
	// Modules maps a module's dotted path to the functions it defines.
	// A module not listed was not read: functions in it are not judged
	// here (the preflight imports them on the machine).
	Modules map[string][]string
	Source  string
}

// Lookup says whether a dotted function path ("pkg.module.fn") is in a
// module the row read, and whether that module defines it.
func (p ProcessorFacts) Lookup(path string) (known, present bool) {
	dot := strings.LastIndexByte(path, '.')
	if dot < 0 || strings.HasPrefix(path[dot+1:], "_") {
		return false, false // the rows list public functions only
	}
	fns, ok := p.Modules[path[:dot]]
	if !ok {
		return false, false
	}
	for _, fn := range fns {
		if fn == path[dot+1:] {
			return true, true
		}
	}
	return true, false
}

// Loader is one config dialect a release reads and the flag it reads it
// through.
type Loader struct {
	Dialect string
	Flag    string
	Source  string
}

// Facts is a list of names (flags, connectors) with the source that
// establishes them.
type Facts struct {
	Names  []string
	Source string
}

// Has reports whether name is in the list.
func (f Facts) Has(name string) bool {
	for _, n := range f.Names {
		if n == name {
			return true
		}
	}
	return false
}

// StageArgsRuntime is what the `stage_args` loader and the stage runtime
// behind it do with a stage's keys.
type StageArgsRuntime struct {
	// ReadKeys are the stage-level keys the runtime reads.
	ReadKeys []string
	// Ignored are keys the loader passes through and the runtime never
	// reads, each with the key that does what the user meant.
	Ignored []IgnoredKey
	// GenericPD is true when the orchestrator detects the PD pair from the
	// stages' is_prefill_only / is_decode_only flags, for any
	// autoregressive entry stage, with no registration.
	GenericPD bool
	Source    string
}

// IgnoredKey is a stage key a release's runtime does not read. Keys are
// paths inside the stage: ["runtime", "max_batch_size"].
type IgnoredKey struct {
	Key    []string
	ReadAs []string // the key the runtime reads for the same purpose
	// A value under Key in package InPackage that ends in DropSuffix names
	// a function the runtime calls differently; without the suffix it is
	// the one ReadAs takes. Empty: the value moves as it is.
	InPackage, DropSuffix string
	Source                string
}

// Value is what ReadAs takes for a value written under Key.
func (k IgnoredKey) Value(v string) string {
	if k.DropSuffix != "" && strings.HasPrefix(v, k.InPackage) {
		return strings.TrimSuffix(v, k.DropSuffix)
	}
	return v
}

// DeployLoader is the `stages` dialect's loader.
type DeployLoader struct {
	// AsyncChunkDefault is what the loader assumes when the file does not
	// say `async_chunk`.
	AsyncChunkDefault bool
	// PDPipelines are the registered pipeline keys that run PD, by the
	// preset (base pipeline) they split. Empty when none is registered.
	PDPipelines map[string]string
	// RefusesStageArgs is true when a `stage_args` file is an error rather
	// than zero stages.
	RefusesStageArgs bool
	Source           string
}

// Validator is what a release's PD validator checks at startup.
type Validator struct {
	Checks []string // PD checks, named by the Check* constants
	Source string
}

// PD checks a validator may make.
const (
	CheckOnePair            = "one_pd_pair"              // at most one prefill and one decode stage
	CheckRoles              = "kv_roles"                 // prefill kv_producer|kv_both, decode kv_consumer|kv_both
	CheckSameConnector      = "same_kv_connector"        // both sides name the same kv_connector, non-empty
	CheckBuffers            = "same_kv_buffer"           // kv_buffer_device / kv_buffer_size equal when both set
	CheckEqualTP            = "equal_tensor_parallel"    // equal tensor_parallel_size, whatever the connector
	CheckDecodeReadsPrefill = "decode_reads_prefill"     // decode lists prefill in engine_input_source
	CheckKVConfigPresent    = "kv_transfer_config_given" // both sides have a kv_transfer_config
	CheckPrefillEntry       = "prefill_is_entry"         // the prefill stage is stage 0, the one requests enter
)

// Has reports whether the validator makes a check.
func (v Validator) Has(check string) bool {
	for _, c := range v.Checks {
		if c == check {
			return true
		}
	}
	return false
}

// FlagFor returns the flag through which the release reads a dialect, or
// "" when it does not read it.
func (r Release) FlagFor(dialect string) string {
	for _, l := range r.Loaders {
		if l.Dialect == dialect {
			return l.Flag
		}
	}
	return ""
}

// Reads reports whether the release loads a dialect.
func (r Release) Reads(dialect string) bool { return r.FlagFor(dialect) != "" }

// V is the release's parsed version.
func (r Release) V() Version { return MustVersion(r.Version) }

// Line is the release's line, "X.Y".
func (r Release) Line() string { return r.V().Line() }

// StageBased reports whether the release has the stage-based launch: one
// process per stage, a head and headless workers.
func (r Release) StageBased() bool {
	return r.StageCLI.Has(FlagStageID) && r.StageCLI.Has(FlagHeadless) &&
		r.StageCLI.Has(FlagOmniMasterAddress) && r.StageCLI.Has(FlagOmniMasterPort)
}

// Registers reports whether the release registers a PD pipeline key.
func (r Release) Registers(key string) bool {
	if r.Deploy == nil {
		return false
	}
	for _, k := range r.Deploy.PDPipelines {
		if k == key {
			return true
		}
	}
	return false
}

// PDPipeline returns the registered PD pipeline key for a base pipeline in
// the `stages` dialect, or "" when the release registers none.
func (r Release) PDPipeline(base string) string {
	if r.Deploy == nil {
		return ""
	}
	return r.Deploy.PDPipelines[base]
}
