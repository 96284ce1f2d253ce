// Package direct answers the calls Terraform makes for every
// omni_pd_pipeline instance on every plan straight from the protocol
// request: for a resource the validation, the refresh (ReadResource) and
// the plan (PlanResourceChange), for a data source the validation and the
// read. It passes every other call to the framework's server unchanged.
//
// The framework wraps the entities' Read and ModifyPlan in generic passes
// over the whole value: turning null blocks into empty ones and back, a
// semantic-equality pass, and for a plan, comparing every attribute with
// the prior state, marking computed values unknown and running every
// attribute's plan modifiers, setting each value back into the plan; its
// validation finds each attribute's value by walking from the schema's
// root. The state is large (launches, units, config), and for this schema
// (no blocks, no custom types, no defaults, one plan modifier, triggers'
// RequiresReplace, applied here) none of the passes changes the answer,
// while they run once per instance on every plan; PERFORMANCE.md has what
// they cost when measured.
//
// The handlers call the entity's own methods (provider.PlanPDPipelineResource,
// ReadPDPipelineDataSource, the Validate hooks) and hold no logic of their
// own beyond the replacement and the unknowns the framework adds around a
// plan. Validation runs the checks the entities' ValidateConfig already
// makes as the framework's schema walk does
// (TestSchemaChecks_MatchFramework). The parity tests compare both paths'
// answers; TestAssumptions fails if the resource gains what the passes
// exist for. To remove the package, drop direct.Wrap from main.go.
package direct
