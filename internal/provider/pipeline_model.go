package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Go mirrors of the shared schema (pipeline_schema.go). Every field is a
// framework value so that null and unknown survive the round trip.

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
	SplitStage     types.Int64   `tfsdk:"split_stage"`
	Prefill        types.Object  `tfsdk:"prefill"` // roleModel
	Decode         types.Object  `tfsdk:"decode"`  // roleModel
	StageOverrides types.Dynamic `tfsdk:"stage_overrides"`
	GPUs           types.Int64   `tfsdk:"gpus"`
	Connector      types.Object  `tfsdk:"connector"` // connectorModel
	APIPort        types.Int64   `tfsdk:"api_port"`
	PortRange      types.Object  `tfsdk:"port_range"` // portRangeModel
	ReservedPorts  types.Set     `tfsdk:"reserved_ports"`
	ConfigPath     types.String  `tfsdk:"config_path"`
}

type roleModel struct {
	Devices              types.List    `tfsdk:"devices"`
	TensorParallelSize   types.Int64   `tfsdk:"tensor_parallel_size"`
	MaxNumSeqs           types.Int64   `tfsdk:"max_num_seqs"`
	GPUMemoryUtilization types.Float64 `tfsdk:"gpu_memory_utilization"`
	BootstrapPort        types.Int64   `tfsdk:"bootstrap_port"`
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

type portRangeModel struct {
	First types.Int64 `tfsdk:"first"`
	Last  types.Int64 `tfsdk:"last"`
}

// pipelineOutputs are the computed attributes, named in pipelineOutputNames.
type pipelineOutputs struct {
	ID           types.String `tfsdk:"id"`
	ConfigYAML   types.String `tfsdk:"config_yaml"`
	Stages       types.List   `tfsdk:"stages"` // stageModel
	Edges        types.List   `tfsdk:"edges"`  // edgeModel
	Ports        types.List   `tfsdk:"ports"`  // portModel
	GPUCount     types.Int64  `tfsdk:"gpu_count"`
	ServeCommand types.String `tfsdk:"serve_command"`
	ServeArgs    types.List   `tfsdk:"serve_args"`
	Diagram      types.String `tfsdk:"diagram"`
	Launches     types.List   `tfsdk:"launches"` // launchModel
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

type edgeModel struct {
	From types.Int64 `tfsdk:"from"`
	To   types.Int64 `tfsdk:"to"`
}

type portModel struct {
	Name    types.String `tfsdk:"name"`
	Port    types.Int64  `tfsdk:"port"`
	StageID types.Int64  `tfsdk:"stage_id"`
	Host    types.String `tfsdk:"host"`
}

type launchModel struct {
	Host     types.String `tfsdk:"host"`
	StageIDs types.List   `tfsdk:"stage_ids"`
	Argv     types.List   `tfsdk:"argv"`
	Command  types.String `tfsdk:"command"`
	Env      types.Map    `tfsdk:"env"`
	Ports    types.List   `tfsdk:"ports"`
}
