package provider

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// The data source and the resource omni_pd_pipeline share one schema. It is
// written once, in the resource schema's types (a superset of the data
// source's): the inputs here, the outputs as the rows of
// pipelineOutputTable. dataSourceAttributes derives the data source's copy,
// so the two can never drift. Only `triggers` is added by the resource
// alone.

// pipelineComputedInputs are the inputs that are also Computed: unset, they
// hold the value the plan used, so that other resources can read it. Set,
// they read back exactly as written.
var pipelineComputedInputs = []string{"preset", "vllm_omni_version", "config_path", "api_port", "format", "prefill", "decode", "connector", "port_range"}

// nestedComputedInputs are, for the objects among pipelineComputedInputs,
// the fields that are Computed too. Unset (or the whole object unset), each
// holds the value planned; the other fields read back as written.
var nestedComputedInputs = map[string][]string{
	"prefill":    roleComputedFields,
	"decode":     roleComputedFields,
	"connector":  {"name"},
	"port_range": {"first", "last"},
}

var roleComputedFields = []string{"devices", "tensor_parallel_size", "max_num_seqs", "bootstrap_port"}

// pipelineAttributes returns the shared inputs and outputs.
func pipelineAttributes() map[string]schema.Attribute {
	attrs := pipelineInputAttributes()
	for name, a := range pipelineOutputAttributes() {
		attrs[name] = a
	}
	return attrs
}

// pipelineInputAttributes declares the inputs: one straight-line table.
//
//nolint:funlen // a table
func pipelineInputAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"model": schema.StringAttribute{
			MarkdownDescription: "Model to serve: a Hugging Face id (`org/name`, such as `Qwen/Qwen3-Omni-30B-A3B-Instruct`) or an absolute local path. Also selects the base config when neither `preset` nor `base_config` is set: the preset of the published model it names exactly (see `preset`).",
			Required:            true,
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"preset": schema.StringAttribute{
			MarkdownDescription: presetDescription(),
			Optional:            true,
			Computed:            true,
			Validators: []validator.String{
				stringvalidator.LengthAtLeast(1),
				stringvalidator.ConflictsWith(path.MatchRoot("base_config")),
			},
		},
		"base_config": schema.StringAttribute{
			MarkdownDescription: "YAML text of a base config in either dialect (`stage_args` or `stages`), typically `file(\"my_config.yaml\")`. Everything in it is kept; only the split stage and the placement change. Conflicts with `preset`.",
			Optional:            true,
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"format": schema.StringAttribute{
			MarkdownDescription: "Dialect of `config_yaml`: `stage_args` (as in vllm-omni's PD recipe) or `stages` (the current upstream schema). Default: `stage_args` wherever the release reads it (up to 0.26.0rc1) and the base can be written in it, else `stages`. A `stages` base config is written as `stage_args` only when an embedded preset (`preset`, the base's `pipeline:` key, or the one `model` matches) gives the topology the `stages` dialect leaves to vllm-omni's pipeline definitions; its `platforms` section has no place there and is reported as dropped. A `stages` output turns PD on only through a registered pipeline, which no release has: on a release that loads only that dialect (0.26.0 on) the plan writes the registration (`registration`), elsewhere it needs `pipeline`, your own. Unset, it reads back as the dialect written.",
			Optional:            true,
			Computed:            true,
			Validators:          []validator.String{stringvalidator.OneOf("stage_args", "stages")},
		},
		"pipeline": schema.StringAttribute{
			MarkdownDescription: "The top-level `pipeline:` key of a `stages` output, which is how that dialect turns PD on: the name of your own Python module, which registers a PD pipeline under that name with vllm-omni's `register_pipeline()`, the PD flags in its stages' `extras` (the plan warns that PD depends on it). On a release with a pipeline registry (0.24.0 on) every process imports it before vllm-omni's CLI runs, from `registration_path` (beside the check script) or else Python's path (with `container`, write it to `registration_path`, which every container mounts), and refuses to start when it registers no prefill-decode pair. Setting it implies `format = \"stages\"`; it is an error with `stage_args` output. Default: on a release that loads only the `stages` dialect, the registration the plan writes (`registration`); no release registers a PD pipeline itself, so elsewhere a `stages` output needs it.",
			Optional:            true,
			Validators:          []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^[A-Za-z0-9_.-]+$`), "must be a pipeline key: letters, digits, '_', '.', '-'")},
		},
		"split_stage": schema.NumberAttribute{
			MarkdownDescription: "`stage_id` (in the base config) of the stage to split into prefill and decode. Defaults to the thinker.",
			Optional:            true,
			Validators:          []validator.Number{wholeNumber(0, maxWhole)},
		},
		"prefill": roleAttribute("prefill", pipeline.DefaultPrefillMaxSeqs),
		"decode":  roleAttribute("decode", pipeline.DefaultDecodeMaxSeqs),
		"stage_overrides": schema.DynamicAttribute{
			MarkdownDescription: "Settings for the stages that are not split, as an object keyed by `model_stage` name (`talker`, `code2wav`, ...), or by `stage_<id>` (the stage's id in the base config) for a stage whose `model_stage` is missing, shared with another stage, or `prefill`/`decode`; a name two stages share is an error. Each entry may set `devices` (list of number), `max_num_seqs`, `gpu_memory_utilization`, `num_replicas`, `host` and `engine_args` (any object, merged over the base config's). The provider checks this shape itself and reports problems at the entry's path.",
			Optional:            true,
			Validators:          []validator.Dynamic{isObject()},
		},
		"gpus": schema.NumberAttribute{
			MarkdownDescription: "How many GPUs each host **has**: an input, the limit the layout is checked against. Placement uses devices `0` to `gpus - 1` and fails with an error naming the stage when the layout needs more. Unset: no limit is checked. Not to be confused with the output `gpu_count`, how many the plan **needs**.",
			Optional:            true,
			Validators:          []validator.Number{wholeNumber(1, maxWhole)},
		},
		"connector": schema.SingleNestedAttribute{
			MarkdownDescription: "KV connector between prefill and decode. Unset, it reads back with the connector planned in `name`.",
			Optional:            true,
			Computed:            true,
			Attributes: map[string]schema.Attribute{
				"name": schema.StringAttribute{
					MarkdownDescription: connectorNameDescription(),
					Optional:            true,
					Computed:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"protocol": schema.StringAttribute{
					MarkdownDescription: connectorProtocolDescription(),
					Optional:            true,
					Validators:          []validator.String{stringvalidator.OneOf("tcp", "rdma")},
				},
				"device_name": schema.StringAttribute{
					MarkdownDescription: "RDMA NIC for Mooncake (such as `mlx5_0`), with `protocol = \"rdma\"`.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"extra_config": schema.DynamicAttribute{
					MarkdownDescription: connectorExtraConfigDescription(),
					Optional:            true,
					Validators:          []validator.Dynamic{isObject()},
				},
				"kv_both": schema.BoolAttribute{
					MarkdownDescription: connectorKVBothDescription(),
					Optional:            true,
				},
			},
		},
		"api_port": schema.NumberAttribute{
			MarkdownDescription: "Port of the OpenAI-compatible API server. Default: `8091`. Unset, it reads back as the port planned. Below 1024, the unit that listens on it gets `CAP_NET_BIND_SERVICE` (and no other capability), as does any unit with a port below 1024 from `port_range` or a `bootstrap_port`.",
			Optional:            true,
			Computed:            true,
			Validators:          []validator.Number{portValidator()},
		},
		"port_range": schema.SingleNestedAttribute{
			MarkdownDescription: "Range the ports the plan allocates (the PD pair's handshake ports, the omni master, ...) are drawn from, both ends included. Default: `25201` to `25300`. Unset, it reads back as the default range.",
			Optional:            true,
			Computed:            true,
			Validators:          []validator.Object{portRangeOrder()},
			Attributes: map[string]schema.Attribute{
				"first": schema.NumberAttribute{
					MarkdownDescription: "First port of the range.",
					Required:            true,
					Validators:          []validator.Number{portValidator()},
				},
				"last": schema.NumberAttribute{
					MarkdownDescription: "Last port of the range; at least `first`.",
					Required:            true,
					Validators:          []validator.Number{portValidator()},
				},
			},
		},
		"reserved_ports": schema.SetAttribute{
			MarkdownDescription: "Ports never to allocate: another pipeline's, sshd's, ...",
			Optional:            true,
			ElementType:         types.NumberType,
			Validators:          []validator.Set{portValidator()},
		},
		"vllm_omni_version": schema.StringAttribute{
			MarkdownDescription: "The vllm-omni release the machines run: a release line (`\"0.24\"`, its newest final release), " +
				"an exact release (`\"0.24.0\"`) or a release candidate (`\"0.26.0rc1\"`). It decides the config dialect, the " +
				"launch flag and the startup checks the plan must pass; `vllm_omni_release` is the release it resolved to. " +
				"Default: the newest final release on which the plan runs prefill-decode natively (its own loader, PD " +
				"validator and input processors, no registration of your own): `" + defaultReleaseFor() + "` for Qwen3-Omni, `" + defaultReleaseForPreset(presets.Qwen25Omni) + "` for Qwen2.5-Omni " +
				"(whose PD input processors are gone from 0.24.0); a release whose code was not read at its own commit warns; with `pipeline` " +
				"set (your own registration), or where no release runs the plan natively, the newest final release that loads the `stages` dialect. It reads back once " +
				"planned, and the resource keeps the release it planned for while that still runs the plan (a provider that " +
				"knows a newer release does not move it; set the version or change `triggers` to move). The " +
				"[release table](../guides/vllm-omni-releases.md) lists what each release reads.",
			Optional:   true,
			Computed:   true,
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"systemd": schema.SingleNestedAttribute{
			MarkdownDescription: "How each process runs as a systemd service (`systemd_unit`, with each stage's `launches[*].processes[*].systemd_dropin`). Every field has a default. On a host install the units run sandboxed, and every path they are given is judged against their sandbox: one they read (`config_path`, a local `model`, `vllm_path`, `python_path`, a stage's `model` or `tokenizer`) under `/home`, `/root` or `/run/user` (`ProtectHome=yes`) or `/tmp` or `/var/tmp` (`PrivateTmp=yes`) is refused, and so is a `cache_dir` there or in `/dev/shm` (`RemoveIPC=yes`); `environment_file`, which systemd reads before the sandbox is set up, may be anywhere.",
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"user": schema.StringAttribute{
					MarkdownDescription: "The system account the processes run as, with its primary group. Default: `" + pipeline.DefaultServiceUser + "`. Create it on the machine; `root` is refused. Unused with `container` (a warning): those units run the runtime's client as root.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"cache_dir": schema.StringAttribute{
					MarkdownDescription: "The model cache, `HF_HOME` (and `HOME`, for the Triton and torch compile caches): the one directory the processes write besides `/dev/shm`. Default: `" + pipeline.DefaultCacheDir + "`, which systemd creates (`CacheDirectory=`) owned by the account the units run as: `user`, or root with `container`; any other path must exist, writable by that account. The processes write it, so it must not hold `/etc/systemd/system` or `check_script_path`, which they could then rewrite; the deploy config and the environment file may lie in it.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"vllm_path": schema.StringAttribute{
					MarkdownDescription: "Absolute path of the `vllm` executable on the machine image; the units run it in place of `argv[0]`. Default: `" + pipeline.DefaultVLLMPath + "`. With `container`, the path in the image, by default the official image's `" + pipeline.ImageVLLMPath + "`.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"python_path": schema.StringAttribute{
					MarkdownDescription: "The Python that runs vllm (a virtualenv's `bin/python3`; `/usr/bin/python3` for a system-wide pip install), which runs each process's preflight before it execs `vllm`; the preflight refuses to start a `vllm` whose script names another Python (its `#!` line, or the `/bin/sh` trampoline pip, virtualenv and uv write for a long path or one with a space; a virtualenv counts as its own Python), and names the one to set. Default: `python3` beside `vllm_path`; for `vllm_path = \"/usr/local/bin/vllm\"` (the default), where both a Python built into `/usr/local` and the distribution's pip for `/usr/bin/python3` put `vllm`, `python3` as the unit's `PATH` finds it (`/usr/bin/env python3`: `/usr/local/bin/python3`, else `/usr/bin/python3`). A path the units' sandbox hides (under `/tmp`, `/var/tmp`, `/home`, `/root` or `/run/user`) is refused. With `container`, the path in the image, by default the official image's `" + pipeline.ImagePythonPath + "`.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"environment_file": schema.StringAttribute{
					MarkdownDescription: "A file on the machine with secrets for the processes, such as `HF_TOKEN=...`, read by systemd (`EnvironmentFile=-`, so it may be absent). Keeping secrets there keeps them out of Terraform state. Default: `" + pipeline.DefaultEnvironmentFile + "`. A file of its own: not `/`, not `config_path`, `check_script_path` or `cache_dir`, and not in `/etc/systemd/system`; it may lie in `cache_dir` and be shared by pipelines.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"unit_prefix": schema.StringAttribute{
					MarkdownDescription: "Unit names: `<unit_prefix>-stage@<n>.service` for each stage's own process (across hosts, and on one host where the release applies no stage's `runtime.env` in a whole-pipeline process), `<unit_prefix>.service` for a whole-pipeline one. Give each pipeline on a host its own. Default: `" + pipeline.DefaultUnitPrefix + "`.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"head_wait_seconds": schema.NumberAttribute{
					MarkdownDescription: "How long a headless process waits for the head's omni master port before it fails (and systemd restarts it). The wait is the preflight's, in the unit's main process, so the unit counts as started at once and the boot never waits for the head. Only headless units read it. Default: `" + strconv.Itoa(pipeline.DefaultHeadWaitSeconds) + "`.",
					Optional:            true,
					Validators:          []validator.Number{wholeNumber(10, 86400)},
				},
			},
		},
		"container": containerAttribute(),
		"config_path": schema.StringAttribute{
			MarkdownDescription: "Absolute path where `config_yaml` will be written on the host; the launch command passes it with the flag the release reads its dialect through (`--stage-configs-path` for `stage_args`, `--deploy-config` for `stages`). Default: `" + pipeline.DefaultConfigPath + "`. Unset, it reads back as the default, so `write_files` and the like can use it. " +
				"It must be a normalized file path of its own (no trailing `/`, `//`, `.` or `..`): not `check_script_path`, `systemd.environment_file`, `systemd.cache_dir`, `systemd.vllm_path` or `systemd.python_path`, not under any of those files, not a directory another of them lies in, and not in `/etc/systemd/system`, where the plan writes its units. Two pipelines on one machine need distinct config paths; the provider sees one pipeline at a time.",
			Optional:   true,
			Computed:   true,
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
	}
}

// presetDescription documents the presets and how one is chosen from
// model, from the presets package's own table, so the docs say what the
// plan does.
func presetDescription() string {
	var names, known []string
	for _, n := range presets.Names() {
		names = append(names, "`"+n+"` ("+presets.Pipeline(n)+")")
	}
	for _, v := range presets.Variants {
		known = append(known, "`"+v.ID+"` → `"+v.Preset+"`")
	}
	return "Name of the embedded base config to split: " + strings.Join(names, ", ") + ". Conflicts with `base_config`. " +
		"Unset, it is the preset of the published model `model` names, by its whole Hugging Face id, or an absolute local path's last element " +
		"(`/models/Qwen3-Omni-30B-A3B-Thinking`), regardless of case: " + strings.Join(known, ", ") + ". " +
		"A Qwen3-Omni model has the talker or not as its config's `enable_audio_output` says, so no preset is guessed from part of an id: " +
		"another id of these families (a fine-tune, a quantized copy) is an error (`preset_variant_unknown`) until `preset` names the pipeline the model has, " +
		"and a published model given a preset with stages it has no weights for is one too (`preset_variant_mismatch`). " +
		"It reads back as the preset the plan used, so the plan shows the choice; null with `base_config`. " +
		"[Models and presets](../guides/models.md) gives the source of each model's pipeline."
}

// defaultReleaseFor is the release the default Qwen3-Omni plan targets,
// for the docs.
func defaultReleaseFor() string { return defaultReleaseForPreset(presets.Qwen3OmniMoe) }

// qwen3DefaultRelease is defaultReleaseFor, computed once for the
// entities' description.
var qwen3DefaultRelease = defaultReleaseFor()

// defaultReleaseForPreset is the release a preset's default plan targets.
func defaultReleaseForPreset(name string) string {
	need := releases.Need{BaseDialect: releases.StageArgs, BasePipeline: name, Connectors: []string{pipeline.DefaultConnector}}
	if doc, err := presets.Shared(name); err == nil {
		need.Processors = releases.ProcessorsOf(doc)
	}
	c, _ := releases.Choose("", need)
	return c.Release.Version
}

// roleAttribute is the prefill or the decode object.
func roleAttribute(role string, defaultMaxSeqs int) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "The " + role + " stage of the split pair. Unset, or with fields unset, `devices`, `tensor_parallel_size`, `max_num_seqs` and `bootstrap_port` read back as planned.",
		Optional:            true,
		Computed:            true,
		Attributes: map[string]schema.Attribute{
			"devices": schema.ListAttribute{
				MarkdownDescription: "GPU indices the " + role + " stage runs on, as many as `tensor_parallel_size`. Default: allocated from the free GPUs. Unset, it reads back as the devices planned.",
				Optional:            true,
				Computed:            true,
				ElementType:         types.NumberType,
				Validators:          devicesValidators(),
			},
			"tensor_parallel_size": schema.NumberAttribute{
				MarkdownDescription: "Tensor parallel size. Default: the split stage's own `tensor_parallel_size` in the base config (`1` in the presets). Prefill and decode must have the same value whatever the connector: vllm-omni's PD validator refuses any difference (NixlConnector included, although vLLM alone would accept a larger decode size). Unset, it reads back as the size planned.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.Number{wholeNumber(1, maxWhole)},
			},
			"max_num_seqs": schema.NumberAttribute{
				MarkdownDescription: "`max_num_seqs` engine arg. Default: `" + strconv.Itoa(defaultMaxSeqs) + "`. Unset, it reads back as the default.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.Number{wholeNumber(1, maxWhole)},
			},
			"gpu_memory_utilization": schema.NumberAttribute{
				MarkdownDescription: "Share of each GPU's memory the stage may use, greater than 0 and at most 1. Default: the base config's.",
				Optional:            true,
				Validators:          []validator.Number{fractionValidator()},
			},
			"bootstrap_port": schema.NumberAttribute{
				MarkdownDescription: bootstrapPortDescription(),
				Optional:            true,
				Computed:            true,
				Validators:          []validator.Number{portValidator()},
			},
			"host": schema.StringAttribute{
				MarkdownDescription: "Private IP address of the machine that runs the stage, the one vLLM binds and advertises (`VLLM_HOST_IP`, `kv_ip`); a DNS name is refused. IPv4 across hosts: vllm-omni's stage-based launch cannot use IPv6. Unset: every stage runs on one host.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"engine_args": schema.DynamicAttribute{
				MarkdownDescription: "Any object, merged over the split stage's `engine_args` from the base config.",
				Optional:            true,
				Validators:          []validator.Dynamic{isObject()},
			},
		},
	}
}

// devicesValidators: a device list names distinct, non-negative GPU indices.
func devicesValidators() []validator.List {
	return []validator.List{
		listvalidator.SizeAtLeast(1),
		wholeNumber(0, maxWhole),
		uniqueDevices(),
	}
}

// portValidator checks a port number, alone or in a set.
func portValidator() wholeNumberValidator { return wholeNumber(1, 65535) }

// pdPipelineDescription opens both entities' documentation.
var pdPipelineDescription = "Plans a [vllm-omni](https://github.com/vllm-project/vllm-omni) deployment with " +
	"prefill-decode disaggregation: the thinker (or `split_stage`) is split into a prefill and a decode stage " +
	"joined by a KV connector, every stage is placed on GPUs, ports are allocated, and the deploy-config YAML, " +
	"the stage graph and the exact `vllm serve` command are rendered, all at plan time.\n\n" +
	"With only `model` set for a Qwen3-Omni model the result is vllm-omni's PD recipe: prefill on GPU 0, decode " +
	"on GPU 1, talker and code2wav on GPU 2, API port 8091, for vllm-omni " + qwen3DefaultRelease + ". Where the recipe is wrong for every " +
	"release the plan follows the release's code: the config is read through `--stage-configs-path`, the processors are " +
	"`custom_process_input_func`, the KV connector is `NixlConnector` (with the recipe's MooncakeConnector every PD request fails), and " +
	"each stage runs as its own process, since that release applies no stage's `runtime.env` in a whole-pipeline process. The " +
	"[release table](../guides/vllm-omni-releases.md) lists every such deviation with its source."
