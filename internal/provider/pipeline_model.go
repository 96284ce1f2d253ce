package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Go mirrors of the shared schema's inputs (pipeline_schema.go). Every
// field is a framework value so that null and unknown survive the round
// trip. Numeric inputs are types.Number, checked to be whole by their
// validators (see wholeNumber). The outputs have no model: the plan writes
// them as Terraform values (outputsFromResult), and only the allocator
// reads any back (priorOutputs).

// pipelineInputs are the inputs both entities plan from (readInputs reads
// them).
type pipelineInputs struct {
	Model          types.String  `tfsdk:"model"`
	Preset         types.String  `tfsdk:"preset"`
	BaseConfig     types.String  `tfsdk:"base_config"`
	Format         types.String  `tfsdk:"format"`
	Pipeline       types.String  `tfsdk:"pipeline"`
	SplitStage     types.Number  `tfsdk:"split_stage"`
	Prefill        types.Object  `tfsdk:"prefill"` // roleModel
	Decode         types.Object  `tfsdk:"decode"`  // roleModel
	StageOverrides types.Dynamic `tfsdk:"stage_overrides"`
	GPUs           types.Number  `tfsdk:"gpus"`
	Connector      types.Object  `tfsdk:"connector"` // connectorModel
	APIPort        types.Number  `tfsdk:"api_port"`
	PortRange      types.Object  `tfsdk:"port_range"` // portRangeModel
	ReservedPorts  types.Set     `tfsdk:"reserved_ports"`
	ConfigPath     types.String  `tfsdk:"config_path"`
	Systemd        types.Object  `tfsdk:"systemd"`   // systemdModel
	Container      types.Object  `tfsdk:"container"` // containerModel
	// VLLMOmniVersion is Optional + Computed: in a plan it may hold the
	// value planned before, so the entities read it from the configuration.
	VLLMOmniVersion types.String `tfsdk:"vllm_omni_version"`
}

// readInputs reads the inputs of raw, a configuration (or a plan or state:
// the same attributes) of the entity whose schema vs is: each attribute
// converted as the framework converts it (validationSchema.attributes), the
// model filled by its tags as Config.Get fills one (fillModel,
// TestFillModel_MatchesFramework). The outputs and triggers are not read:
// nothing is planned from them.
func readInputs(ctx context.Context, raw tftypes.Value, vs validationSchema) (pipelineInputs, diag.Diagnostics) {
	var in pipelineInputs
	var diags diag.Diagnostics
	attrs, err := vs.attributes(ctx, raw)
	if err == nil {
		err = fillModel(inputsOf(attrs), &in)
	}
	if err != nil {
		addDefect(&diags, path.Empty(), "the configuration cannot be read: "+err.Error())
	}
	return in, diags
}

// inputsOf is the inputs among an object's attributes.
func inputsOf(attrs map[string]attr.Value) map[string]attr.Value {
	names := pipelineInputNames()
	out := make(map[string]attr.Value, len(names))
	for _, name := range names {
		if v, ok := attrs[name]; ok {
			out[name] = v
		}
	}
	return out
}

// pipelineInputNames are the inputs' names, from the schema.
var pipelineInputNames = sync.OnceValue(func() []string {
	return sortedNames(pipelineInputAttributes())
})

type roleModel struct {
	Devices              types.List    `tfsdk:"devices"`
	TensorParallelSize   types.Number  `tfsdk:"tensor_parallel_size"`
	MaxNumSeqs           types.Number  `tfsdk:"max_num_seqs"`
	GPUMemoryUtilization types.Number  `tfsdk:"gpu_memory_utilization"`
	BootstrapPort        types.Number  `tfsdk:"bootstrap_port"`
	Host                 types.String  `tfsdk:"host"`
	EngineArgs           types.Dynamic `tfsdk:"engine_args"`
}

type connectorModel struct {
	Name        types.String  `tfsdk:"name"`
	Protocol    types.String  `tfsdk:"protocol"`
	DeviceName  types.String  `tfsdk:"device_name"`
	ExtraConfig types.Dynamic `tfsdk:"extra_config"`
	KVBoth      types.Bool    `tfsdk:"kv_both"`
}

type systemdModel struct {
	User            types.String `tfsdk:"user"`
	CacheDir        types.String `tfsdk:"cache_dir"`
	VLLMPath        types.String `tfsdk:"vllm_path"`
	PythonPath      types.String `tfsdk:"python_path"`
	EnvironmentFile types.String `tfsdk:"environment_file"`
	UnitPrefix      types.String `tfsdk:"unit_prefix"`
	HeadWaitSeconds types.Number `tfsdk:"head_wait_seconds"`
}

type portRangeModel struct {
	First types.Number `tfsdk:"first"`
	Last  types.Number `tfsdk:"last"`
}
