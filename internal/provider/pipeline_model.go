package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Go mirrors of the shared schema (pipeline_schema.go). Every field is a
// framework value so that null and unknown survive the round trip. Numeric
// inputs are types.Number, checked to be whole by their validators (see
// wholeNumber); numeric outputs are types.Int64.

// pipelineModel is the data source's whole state and the part of the
// resource's state that both share.
type pipelineModel struct {
	pipelineInputs
	pipelineOutputs
}

// pipelineResourceModel adds the resource-only attribute.
type pipelineResourceModel struct {
	pipelineModel
	Triggers types.Map `tfsdk:"triggers"`
}

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
	Systemd        types.Object  `tfsdk:"systemd"` // systemdModel
	// VLLMOmniVersion is Optional + Computed: in a plan it may hold the
	// value planned before, so the entities read it from the configuration.
	VLLMOmniVersion types.String `tfsdk:"vllm_omni_version"`
}

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

// pipelineOutputs are the computed attributes, named in pipelineOutputNames.
type pipelineOutputs struct {
	ID           types.String `tfsdk:"id"`
	ConfigYAML   types.String `tfsdk:"config_yaml"`
	Stages       types.List   `tfsdk:"stages"` // stageModel
	Edges        types.List   `tfsdk:"edges"`  // objects {from, to}
	Ports        types.List   `tfsdk:"ports"`  // portModel
	GPUCount     types.Int64  `tfsdk:"gpu_count"`
	ServeCommand types.String `tfsdk:"serve_command"`
	ServeArgs    types.List   `tfsdk:"serve_args"`
	Diagram      types.String `tfsdk:"diagram"`
	Launches     types.List   `tfsdk:"launches"` // launchModel
	SystemdUnit  types.Object `tfsdk:"systemd_unit"`
	CheckScript  types.String `tfsdk:"check_script_path"`
	Release      types.String `tfsdk:"vllm_omni_release"`
	ConfigSHA256 types.String `tfsdk:"config_sha256"`
	Health       types.Object `tfsdk:"health"`
}

type stageModel struct {
	StageID            types.Int64  `tfsdk:"stage_id"`
	Role               types.String `tfsdk:"role"`
	ModelStage         types.String `tfsdk:"model_stage"`
	Devices            types.List   `tfsdk:"devices"`
	TensorParallelSize types.Int64  `tfsdk:"tensor_parallel_size"`
	Inputs             types.List   `tfsdk:"inputs"`
	KVRole             types.String `tfsdk:"kv_role"`
	BootstrapPort      types.Int64  `tfsdk:"bootstrap_port"`
	Host               types.String `tfsdk:"host"`
}

type portModel struct {
	Name    types.String `tfsdk:"name"`
	Port    types.Int64  `tfsdk:"port"`
	StageID types.Int64  `tfsdk:"stage_id"`
	Host    types.String `tfsdk:"host"`
}

type launchModel struct {
	Host      types.String `tfsdk:"host"`
	StageIDs  types.List   `tfsdk:"stage_ids"`
	Env       types.Map    `tfsdk:"env"`
	Ports     types.List   `tfsdk:"ports"`
	GPUCount  types.Int64  `tfsdk:"gpu_count"`
	Processes types.List   `tfsdk:"processes"` // processModel
}

type processModel struct {
	StageID       types.Int64  `tfsdk:"stage_id"`
	Role          types.String `tfsdk:"role"`
	UnitName      types.String `tfsdk:"unit_name"`
	SystemdDropIn types.Object `tfsdk:"systemd_dropin"` // {path, content}
}
