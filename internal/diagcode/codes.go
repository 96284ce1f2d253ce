// Package diagcode is the catalogue of the codes the engine puts on its
// errors and warnings. A code is stable: the provider shows it in brackets
// at the end of each message, and users, scripts and tests match on it.
//
// Every emitter passes one of the codes below (Code is closed: no other
// value can be built outside this package), and every code has an entry in
// the catalogue (Areas) saying what it means and how to fix it; the
// package's tests check that each code is used and at which severity by
// reading the emitters' source. The docs' diagnostics page is rendered from
// the catalogue.
package diagcode

// Code is a diagnostic's stable identifier, such as "tp_mismatch". It is
// a closed type: only the values below exist, so a diagnostic cannot carry
// a code the catalogue does not hold, and the compiler, not a scan of the
// source, says so.
type Code struct{ name string }

// String is the code as users see it, in brackets after a message.
func (c Code) String() string { return c.name }

// IsZero reports whether c is no code at all.
func (c Code) IsZero() bool { return c.name == "" }

// Model and preset.
var (
	ModelEmpty            = Code{"model_empty"}
	ModelInvalid          = Code{"model_invalid"}
	ModelControlCharacter = Code{"model_control_character"}
	PresetUnknown         = Code{"preset_unknown"}
	PresetNotInferred     = Code{"preset_not_inferred"}
	PresetVariantUnknown  = Code{"preset_variant_unknown"}
	PresetVariantMismatch = Code{"preset_variant_mismatch"}
	PresetUnreadable      = Code{"preset_unreadable"}
	PresetAndBaseConfig   = Code{"preset_and_base_config"}
	ModelArchMismatch     = Code{"model_arch_mismatch"}
)

// Base config, config files and format.
var (
	BaseConfigInvalid           = Code{"base_config_invalid"}
	YAMLValueType               = Code{"yaml_value_type"}
	YAMLValueNotFinite          = Code{"yaml_value_not_finite"}
	YAMLShape                   = Code{"yaml_shape"}
	YAMLInterpolation           = Code{"yaml_interpolation"}
	YAMLInterpolationKept       = Code{"yaml_interpolation_kept"}
	YAMLAnchorsWrittenOut       = Code{"yaml_anchors_written_out"}
	ConfigUnreadable            = Code{"config_unreadable"}
	BaseNoStages                = Code{"base_no_stages"}
	BaseAlreadySplit            = Code{"base_already_split"}
	ConfigPathNotAbsolute       = Code{"config_path_not_absolute"}
	ConfigPathControlCharacter  = Code{"config_path_control_character"}
	PathNotAFile                = Code{"path_not_a_file"}
	PathCollision               = Code{"path_collision"}
	FormatUnknown               = Code{"format_unknown"}
	FormatConversionUnsupported = Code{"format_conversion_unsupported"}
	FormatConversionDroppedKey  = Code{"format_conversion_dropped_key"}
	PlatformDevicesKept         = Code{"platform_devices_kept"}
	IgnoredKeyTranslated        = Code{"ignored_key_translated"}
	EnvNameInvalid              = Code{"env_name_invalid"}
	EnvValueInvalid             = Code{"env_value_invalid"}
	EnvVarPlanned               = Code{"env_var_planned"}
	SecretInState               = Code{"secret_in_state"}
	SecretByName                = Code{"secret_by_name"}
)

// Stage graph: ids, inputs, edges and the connectors on them.
var (
	StageIDNegative    = Code{"stage_id_negative"}
	StageIDMissing     = Code{"stage_id_missing"}
	StageIDDuplicate   = Code{"stage_id_duplicate"}
	StageInputsInvalid = Code{"stage_inputs_invalid"}
	InputSelf          = Code{"input_self"}
	InputUnknown       = Code{"input_unknown"}
	GraphCycle         = Code{"graph_cycle"}
	NoEntryStage       = Code{"no_entry_stage"}
	NoFinalOutput      = Code{"no_final_output"}
	StageNeverReached  = Code{"stage_never_reached"}
	ModelStageMissing  = Code{"model_stage_missing"}
	EdgesInvalid       = Code{"edges_invalid"}
	EdgeNotInInputs    = Code{"edge_not_in_inputs"}
	EdgeStageUnknown   = Code{"edge_stage_unknown"}
	EdgeSelf           = Code{"edge_self"}
	EdgeMissing        = Code{"edge_missing"}
	ConnectorUndefined = Code{"connector_undefined"}
	ConnectorConflict  = Code{"connector_conflict"}
)

// The split into prefill and decode.
var (
	SplitStageRange             = Code{"split_stage_range"}
	SplitStageUnknown           = Code{"split_stage_unknown"}
	SplitStageNotAutoregressive = Code{"split_stage_not_autoregressive"}
	SplitStageNotFound          = Code{"split_stage_not_found"}
	SplitNotEntry               = Code{"split_not_entry"}
)

// The prefill-decode pair in a config.
var (
	PDMultiplePairs        = Code{"pd_multiple_pairs"}
	PDPrefillAlone         = Code{"pd_prefill_alone"}
	PDDecodeAlone          = Code{"pd_decode_alone"}
	PDDecodeInput          = Code{"pd_decode_input"}
	KVConfigMissing        = Code{"kv_config_missing"}
	KVRolePrefill          = Code{"kv_role_prefill"}
	KVRoleDecode           = Code{"kv_role_decode"}
	KVConnectorEmpty       = Code{"kv_connector_empty"}
	KVConnectorMismatch    = Code{"kv_connector_mismatch"}
	KVBufferDeviceMismatch = Code{"kv_buffer_device_mismatch"}
	KVBufferSizeMismatch   = Code{"kv_buffer_size_mismatch"}
	TPMismatch             = Code{"tp_mismatch"}
)

// Prefill, decode and stage settings.
var (
	TensorParallelSizeRange   = Code{"tensor_parallel_size_range"}
	PipelineParallelSizeRange = Code{"pipeline_parallel_size_range"}
	DataParallelSizeRange     = Code{"data_parallel_size_range"}
	MaxNumSeqsRange           = Code{"max_num_seqs_range"}
	GPUMemoryUtilizationRange = Code{"gpu_memory_utilization_range"}
	DeviceNegative            = Code{"device_negative"}
	DeviceRepeated            = Code{"device_repeated"}
	DevicesEmpty              = Code{"devices_empty"}
	EngineArgsManagedKey      = Code{"engine_args_managed_key"}
	EngineArgsValue           = Code{"engine_args_value"}
	EngineArgsInterpolation   = Code{"engine_args_interpolation"}
)

// Placement: GPUs, devices and memory.
var (
	GPUsRange               = Code{"gpus_range"}
	DevicesInvalid          = Code{"devices_invalid"}
	DevicesWorldSize        = Code{"devices_world_size"}
	WorldSizeRange          = Code{"world_size_range"}
	GPUsExceeded            = Code{"gpus_exceeded"}
	PDDevicesOverlap        = Code{"pd_devices_overlap"}
	GPUMemoryOversubscribed = Code{"gpu_memory_oversubscribed"}
	GPUMemoryTight          = Code{"gpu_memory_tight"}
)

// Ports.
var (
	PortInvalid          = Code{"port_invalid"}
	PortRangeInvalid     = Code{"port_range_invalid"}
	PortRangeInverted    = Code{"port_range_inverted"}
	ReservedPortInvalid  = Code{"reserved_port_invalid"}
	PortCollision        = Code{"port_collision"}
	PortReserved         = Code{"port_reserved"}
	PortRangeExhausted   = Code{"port_range_exhausted"}
	BootstrapPortUnused  = Code{"bootstrap_port_unused"}
	BootstrapEnvMismatch = Code{"bootstrap_env_mismatch"}
	BasePortInvalid      = Code{"base_port_invalid"}
	PortEphemeral        = Code{"port_ephemeral"}
	PortWellKnown        = Code{"port_well_known"}
)

// The KV connector attribute.
var (
	ConnectorUnknown              = Code{"connector_unknown"}
	ConnectorProtocolUnsupported  = Code{"connector_protocol_unsupported"}
	ConnectorProtocolUnknown      = Code{"connector_protocol_unknown"}
	ConnectorDeviceNameUnused     = Code{"connector_device_name_unused"}
	ConnectorKVBothUnsupported    = Code{"connector_kv_both_unsupported"}
	ConnectorHandoffGate          = Code{"connector_handoff_gate"}
	ConnectorExtraManagedKey      = Code{"connector_extra_managed_key"}
	ConnectorExtraMissing         = Code{"connector_extra_missing"}
	ConnectorProxyInvalid         = Code{"connector_proxy_invalid"}
	ConnectorProxyLoopback        = Code{"connector_proxy_loopback"}
	MultiConnectorChildren        = Code{"multi_connector_children"}
	MultiConnectorChildManagedKey = Code{"multi_connector_child_managed_key"}
)

// Hosts and the edges between them.
var (
	HostInvalid                 = Code{"host_invalid"}
	HostMissing                 = Code{"host_missing"}
	HostUnreachable             = Code{"host_unreachable"}
	HostIPv6Unsupported         = Code{"host_ipv6_unsupported"}
	CrossHostConnectorsShape    = Code{"cross_host_connectors_shape"}
	CrossHostConnectorNameTaken = Code{"cross_host_connector_name_taken"}
	CrossHostConnectorReplaced  = Code{"cross_host_connector_replaced"}
)

// stage_overrides.
var (
	StageOverridesShape      = Code{"stage_overrides_shape"}
	StageOverridesType       = Code{"stage_overrides_type"}
	StageOverridesRange      = Code{"stage_overrides_range"}
	StageOverridesUnknownKey = Code{"stage_overrides_unknown_key"}
	NumReplicasRange         = Code{"num_replicas_range"}
	NixlReplicasOnePort      = Code{"nixl_replicas_one_port"}
	NumReplicasUnsupported   = Code{"num_replicas_unsupported"}
	OverrideAmbiguous        = Code{"override_ambiguous"}
	OverrideSplitStage       = Code{"override_split_stage"}
	OverrideUnknownStage     = Code{"override_unknown_stage"}
)

// systemd.
var (
	SystemdUserInvalid         = Code{"systemd_user_invalid"}
	CacheDirSystem             = Code{"cache_dir_system"}
	CacheDirNotAbsolute        = Code{"cache_dir_not_absolute"}
	VLLMPathNotAbsolute        = Code{"vllm_path_not_absolute"}
	PythonPathNotAbsolute      = Code{"python_path_not_absolute"}
	EnvironmentFileNotAbsolute = Code{"environment_file_not_absolute"}
	SystemdPathInvalid         = Code{"systemd_path_invalid"}
	SystemdPathProtected       = Code{"systemd_path_protected"}
	SystemdUnitPrefixInvalid   = Code{"systemd_unit_prefix_invalid"}
	SystemdHeadWaitRange       = Code{"systemd_head_wait_range"}
	HeadWaitUnused             = Code{"head_wait_unused"}
)

// container.
var (
	ContainerInvalid       = Code{"container_invalid"}
	ContainerPathUnmounted = Code{"container_path_unmounted"}
	ContainerImageRelease  = Code{"container_image_release"}
	ContainerImageUnpinned = Code{"container_image_unpinned"}
	ContainerSettingUnused = Code{"container_setting_unused"}
)

// The vllm-omni release and the planned output.
var (
	ReleaseNone            = Code{"release_none"}
	ReleaseMalformed       = Code{"release_malformed"}
	ReleaseNoPD            = Code{"release_no_pd"}
	ReleaseBeforePD        = Code{"release_before_pd"}
	ReleaseUnknownNewer    = Code{"release_unknown_newer"}
	ReleaseUnknown         = Code{"release_unknown"}
	PipelineUnused         = Code{"pipeline_unused"}
	PipelineUserRegistered = Code{"pipeline_user_registered"}
	PDThinkerOnly          = Code{"pd_thinker_only"}
	RegistrationAsyncChunk = Code{"registration_async_chunk"}
	ReleaseRowUnread       = Code{"release_row_unread"}
	ReleaseConformance     = Code{"release_conformance"}
	RenderFailed           = Code{"render_failed"}
)

// A release's own checks (releases.Conform). Each rule's name is its code
// without the release_ prefix.
var (
	ReleaseDialectUnreadable    = Code{"release_dialect_unreadable"}
	ReleaseConfigFlag           = Code{"release_config_flag"}
	ReleaseStageID              = Code{"release_stage_id"}
	ReleaseModelStage           = Code{"release_model_stage"}
	ReleaseIgnoredKey           = Code{"release_ignored_key"}
	ReleasePipelineMissing      = Code{"release_pipeline_missing"}
	ReleasePipelineUnregistered = Code{"release_pipeline_unregistered"}
	ReleaseAsyncChunkImplicit   = Code{"release_async_chunk_implicit"}
	ReleaseStageArgsInStages    = Code{"release_stage_args_in_stages"}
	ReleasePDPair               = Code{"release_pd_pair"}
	ReleaseKVTransferConfig     = Code{"release_kv_transfer_config"}
	ReleaseKVRole               = Code{"release_kv_role"}
	ReleaseDecodeInput          = Code{"release_decode_input"}
	ReleaseKVConnector          = Code{"release_kv_connector"}
	ReleaseKVBuffer             = Code{"release_kv_buffer"}
	ReleaseTensorParallel       = Code{"release_tensor_parallel"}
	ReleasePrefillEntry         = Code{"release_prefill_entry"}
	ReleaseKVConnectorUnknown   = Code{"release_kv_connector_unknown"}
	ReleaseCrossHostEdge        = Code{"release_cross_host_edge"}
	ReleaseMooncakeBootstrapEnv = Code{"release_mooncake_bootstrap_env"}
	ReleaseCommand              = Code{"release_command"}
	ReleaseCLIFlag              = Code{"release_cli_flag"}
	ReleaseLaunches             = Code{"release_launches"}
	ReleaseHandoffGate          = Code{"release_handoff_gate"}
	ReleaseProcessorMissing     = Code{"release_processor_missing"}
	ReleaseStageKeyRequired     = Code{"release_stage_key_required"}
	ReleaseStageEnvUnapplied    = Code{"release_stage_env_unapplied"}
)
