package provider

import (
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// pipelineOutputTable is every output of omni_pd_pipeline, in the order the
// schema documents them: its name, its declaration and description, and how
// the plan's result gives its value. Everything else about an output
// derives from its row: both entities' schemas (pipelineOutputAttributes),
// the docs, the state's type that internal/direct writes, the values
// outputsFromResult writes, the unknowns while an input is unknown, and the
// framework-value oracle of the parity tests (outputField says how).
//
// A new output is a row here, and its value in a test that plans it. It
// needs no new state version: a state written before it reads it as null,
// and the next plan computes it (resource_pd_pipeline_upgrade.go says why,
// and when a version is due).
var pipelineOutputTable = []outputField[*pipeline.Result]{
	text("id", "Content hash of the rendered config and launch.",
		func(r *pipeline.Result) string { return r.ID }),
	text("config_yaml", "The deploy config to write to `config_path`. With `container`, each stage's devices are numbered as its container sees them.",
		func(r *pipeline.Result) string { return r.ConfigYAML }),
	objects("stages", "Every stage of the planned pipeline, by `stage_id`.",
		func(r *pipeline.Result) []pipeline.StageInfo { return r.Stages },
		integer("stage_id", "Stage id in `config_yaml`.",
			func(s *pipeline.StageInfo) int { return s.StageID }),
		text("role", "`prefill`, `decode` or `stage`.",
			func(s *pipeline.StageInfo) string { return s.Role }),
		text("model_stage", "`model_stage` (`thinker`, `talker`, `code2wav`, ...).",
			func(s *pipeline.StageInfo) string { return s.ModelStage }),
		integers("devices", "GPU indices the stage runs on.",
			func(s *pipeline.StageInfo) []int { return s.Devices }),
		integer("tensor_parallel_size", "Tensor parallel size.",
			func(s *pipeline.StageInfo) int { return s.TensorParallelSize }),
		integers("inputs", "Stage ids the stage reads from (`engine_input_source`).",
			func(s *pipeline.StageInfo) []int { return s.Inputs }),
		textPointer("kv_role", "`kv_producer` or `kv_consumer` on the prefill-decode pair; null elsewhere.",
			func(s *pipeline.StageInfo) *string { return s.KVRole }),
		integerPointer("bootstrap_port", "The port the other side of the prefill-decode pair dials for the KV handoff, as `prefill.bootstrap_port` and `decode.bootstrap_port` describe (NIXL's side channel with `NixlConnector` or a `MultiConnector` with a NIXL child, whatever the children's order); null elsewhere.",
			func(s *pipeline.StageInfo) *int { return s.BootstrapPort }),
		textOrNull("host", "Host the stage runs on; null on a single-host pipeline.",
			func(s *pipeline.StageInfo) string { return s.Host }),
	),
	objects("edges", "Data paths between stages.",
		func(r *pipeline.Result) []pipeline.Edge { return r.Edges },
		integer("from", "Producing stage id.", func(e *pipeline.Edge) int { return e.From }),
		integer("to", "Consuming stage id.", func(e *pipeline.Edge) int { return e.To }),
	),
	objects("ports", "Every port the deployment listens on, for firewall rules.",
		func(r *pipeline.Result) []pipeline.Port { return r.Ports },
		text("name", "What the port is for (`api`, ...).", func(p *pipeline.Port) string { return p.Name }),
		integer("port", "Port number.", func(p *pipeline.Port) int { return p.Port }),
		integerPointer("stage_id", "Stage that listens on it; null for the API port.",
			func(p *pipeline.Port) *int { return p.StageID }),
		textOrNull("host", "Host that listens on it; null on a single-host pipeline.",
			func(p *pipeline.Port) string { return p.Host }),
	),
	integer("gpu_count", "How many GPUs the busiest host **needs**: an output, its highest device index plus one (devices are the host's GPU indices, so a stage on GPU 5 needs six); size machines with it. Each launch has its own `gpu_count`. The input `gpus` is how many a host **has**; `gpu_count` is never more than it.",
		func(r *pipeline.Result) int { return r.GPUCount }),
	text("serve_command", "The `vllm serve` launch command, shell-quoted. Where `registration_path` is not null it cannot start on its own: vllm-omni finds the config's `pipeline:` in its registry only once the registration is imported, which the preflight's launcher does (`processes` says how to run it).",
		func(r *pipeline.Result) string { return r.ServeCommand }),
	texts("serve_args", "`serve_command` as an argument vector; it too cannot start on its own where `registration_path` is not null.",
		func(r *pipeline.Result) []string { return r.ServeArgs }),
	text("diagram", "The stage graph as a Mermaid flowchart.",
		func(r *pipeline.Result) string { return r.Diagram }),
	objects("launches", "What each host runs, one entry per host, the head's first. Each stage runs as its own process (the head, stage 0, serving the API; the others headless) across hosts, and on one host too where the release applies no stage's `runtime.env` in a whole-pipeline process (every release but 0.22.0 and 0.23.0rc1): there each stage's environment reaches it only as its process's own. Otherwise one process runs `serve_command` and every stage. Key machines by `host` (`{ for l in launches : l.host => l }`).",
		func(r *pipeline.Result) []pipeline.Launch { return r.Launches },
		text("host", "The host's address in canonical form, or `"+pipeline.SingleHost+"` when no stage names a host. Never null.",
			func(l *pipeline.Launch) string { return l.Host }),
		integers("stage_ids", "Stages the host runs.", func(l *pipeline.Launch) []int { return l.StageIDs }),
		textMap("env", "Environment every process on the host needs (`VLLM_HOST_IP` across hosts).",
			func(l *pipeline.Launch) map[string]string { return l.Env }),
		integers("ports", "Ports the host listens on.", func(l *pipeline.Launch) []int { return l.Ports }),
		integer("gpu_count", "GPUs the host needs: its highest device index, plus one.",
			func(l *pipeline.Launch) int { return l.GPUCount }),
		objects("processes", "The OS processes the host runs, in stage order (the head first on its host), each a systemd unit and each with what any other runner needs as data: `argv`, `env`, `devices` and `ports`. The [machines guide](../guides/machines.md) runs them with Slurm and with a container runtime. The unit runs the preflight before vllm: the words of `systemd_unit`'s `ExecStart` up to the `--` before vllm's path, as systemd reads them, `$OMNI_PD_CHECKS` among them the drop-in's value (a whole-pipeline unit has them all inline; with `container`, the words after the image in the `ExecStart` of the stage's drop-in, or of the whole-pipeline unit). A runner without systemd should run the same words, then `--`, vllm's path and `argv` after its first word: the preflight execs vllm once the machine matches the plan (a headless process once the head's omni master answers), and on a machine unlike it exits "+strconv.Itoa(pipeline.PreflightExit)+" with one line saying what differs. Where `registration_path` is not null the preflight is the only way to start a process: its words carry `--registration`, and it runs vllm-omni's CLI through a launcher that imports the registration first.",
			func(l *pipeline.Launch) []pipeline.Process { return l.Processes },
			integerPointer("stage_id", "The stage the process runs; null for a whole-pipeline process that runs every stage.",
				func(p *pipeline.Process) *int { return p.StageID }),
			text("role", "`head` (serves the API and the omni master) or `headless`.",
				func(p *pipeline.Process) string { return p.Role }),
			texts("argv", "What the process runs, as an argument vector: `vllm serve <model> --omni`, the process's own options, the deploy config by its path (`config_path`, where `config_yaml` must be; never its content) and, for a stage's process, its `--stage-id` and the head's omni master. The first word is `vllm`, as on `PATH`; the unit runs `systemd.vllm_path` in its place. The head's is `serve_args`. Where `registration_path` is not null, `argv` alone cannot start: write the registration to `registration_path` and start the process through the preflight, whose words carry `--registration`. Quote every word that reaches a shell: `config_path` and `model` may hold any character but a control character.",
				func(p *pipeline.Process) []string { return p.Argv }),
			textMap("env", "The environment the plan sets for the process, by value: its stage's `runtime.env` in `config_yaml`, with the KV connector's ports, across hosts `VLLM_HOST_IP` (so the launch's `env` too), and what the base config sets. Empty for a whole-pipeline process, which applies each stage's `runtime.env` itself. It is everything the pipeline needs, so a runner sets it and none of the unit's own settings, which belong to the host's install: `HF_HOME` and `HOME` at `systemd.cache_dir`, since its sandbox hides the home directory (elsewhere any cache serves; one per host downloads a model once), and `PATH` with `systemd.vllm_path`'s directory first. It never holds a secret: the unit reads `HF_TOKEN` from `systemd.environment_file`; another runner passes it by name from its own environment.",
				func(p *pipeline.Process) map[string]string { return p.Env }),
			integers("devices", "The GPUs the process runs on: the host's indices, as `nvidia-smi -L` numbers them and `config_yaml` names them (its stage's `devices`; every stage's for a whole-pipeline process). vllm-omni narrows the process to them itself, reading each as a position in the `CUDA_VISIBLE_DEVICES` the process inherits (the host's own GPU when it is unset): give the process the launch's `gpu_count` GPUs in the host's order, never a mask of these devices alone. The units' preflight wants the host's own indices: no mask, or one that starts `0,1,…`. A runner that hands a process only these GPUs, numbered from 0 (a container given only them), must renumber `config_yaml`'s devices to match.",
				func(p *pipeline.Process) []int { return p.Devices }),
			objects("ports", "The ports the process listens on, as `ports` names them: its stage's and, on the head, those of no stage (`api`, `omni_master`, ...). The processes use the host's network: each binds these at the host's address and dials the others' there.",
				func(p *pipeline.Process) []pipeline.NamedPort { return p.Ports },
				text("name", "What the port is for, its name in `ports` (unique on the host).", func(p *pipeline.NamedPort) string { return p.Name }),
				integer("port", "Port number.", func(p *pipeline.NamedPort) int { return p.Port }),
			),
			text("unit_name", "The process's systemd unit: `<unit_prefix>-stage@<N>.service` for a stage's own process (`vllm-omni-stage@0.service`), an instance of the template `systemd_unit`; `<unit_prefix>.service`, `systemd_unit` itself, for a whole-pipeline one.",
				func(p *pipeline.Process) string { return p.UnitName }),
			object("systemd_dropin", "What the stage's instance adds to the template `systemd_unit`: the preflight's options for the stage, its own `vllm` options, its stage's environment and, on a headless stage beside the head, the ordering after the head. With `container`, the ordering and the commands that run, stop and remove the stage's container: its whole run command line is the drop-in's `ExecStart`. Write `content` to `path` (`/etc/systemd/system/<unit_name>.d/plan.conf`). Null for a whole-pipeline process.",
				func(p *pipeline.Process) *pipeline.UnitFile { return p.DropIn },
				text("path", "Where the drop-in goes.", func(f *pipeline.UnitFile) string { return f.Path }),
				text("content", "The drop-in.", func(f *pipeline.UnitFile) string { return f.Content }),
			),
		),
	),
	object("systemd_unit", "The one systemd unit file every host of the plan installs: the template `<unit_prefix>-stage@.service` each stage's process is an instance of, or, for a whole-pipeline launch, `<unit_prefix>.service`. On a host install its `ExecStart` runs the preflight (`check_script_path`), which checks the machine against the plan before any GPU memory is taken, then execs `vllm` in its place (or, where `registration_path` is not null, a launcher that imports the registration and runs vllm-omni's CLI in the same process). With `container` the template has no `ExecStart`: each stage's drop-in holds its whole run command line, which runs the same preflight in the container (a whole-pipeline unit holds its own). Write `content` to `path`.",
		func(r *pipeline.Result) *pipeline.UnitFile { return &r.SystemdUnit },
		text("path", "Where the unit goes, under `/etc/systemd/system`.", func(f *pipeline.UnitFile) string { return f.Path }),
		text("content", "The unit.", func(f *pipeline.UnitFile) string { return f.Content }),
	),
	text("check_script_path", "Where every host keeps the check script, `provider::omni::check_script()`: write it there with the units. The units run its `preflight`, which checks, before any GPU memory is taken, that the installed vllm-omni is the planned release (its line, when `vllm_omni_version` is a line; a local or pre-release build of it passes with a warning), its vLLM is the major.minor that release needs, the file at `config_path` has `config_sha256`, the host has the GPU indices the process is given (`nvidia-smi -L`), the connector's transport package imports (`nixl` for NixlConnector), and every dotted path the release imports for the process's stages resolves (`custom_process_input_func`, `scheduler_cls`, `kv_connector_module_path`; the head checks every stage's); it exits "+strconv.Itoa(pipeline.PreflightExit)+" with one line naming what is missing and the plan's release. `health`'s commands call it too.",
		func(r *pipeline.Result) string { return r.CheckScriptPath }),
	textOrNull("registration_path", "Where every host keeps the pipeline registration the processes import before vllm-omni's CLI resolves the deploy config's `pipeline:`: the module of that name, beside `check_script_path`. On a release that loads only the `stages` dialect (0.26.0 on), which runs prefill-decode only through a registered pipeline and registers none, the plan writes it: `registration`, the split stage's pipeline as that release defines it with the PD flags in each stage's `extras`, named `omni_pd_` and the start of its SHA-256; write it here with the units. With `pipeline`, on a release with a pipeline registry (0.24.0 on), it is your own module of that name: write it here, or install it on the machines' Python path (with `container`, write it here: every container mounts this path). Each process's preflight then execs its Python with a launcher that imports the registry and the module, checks that the pipeline is registered with one prefill and one decode stage, and runs vllm-omni's CLI in that process; it exits "+strconv.Itoa(pipeline.PreflightExit)+" with one line when any of that fails. Null when the processes import no registration.",
		func(r *pipeline.Result) string {
			if r.Registration == nil {
				return ""
			}
			return r.Registration.Path
		}),
	textOrNull("registration", "The pipeline registration the plan writes, to write to `registration_path`: a Python module of data only, which registers the planned pipeline with vllm-omni's `register_pipeline()` under the module's own name. The provider's own bridge over a gap upstream has not closed; the [release guide](../guides/vllm-omni-releases.md) says what it depends on. Null where the plan writes none (your own module with `pipeline`, or a release that runs PD natively).",
		func(r *pipeline.Result) string {
			if r.Registration == nil {
				return ""
			}
			return r.Registration.Content
		}),
	text("vllm_omni_release", "The row of the release table the plan was made for, and so the release every check was made against: the exact release `vllm_omni_version` names (a line resolves to its newest final release), or, with it unset, the newest final release on which this plan runs prefill-decode natively, where its dialect loads, its PD validator passes, its input processors exist and its KV connector passes the handoff gate (the resource keeps the row it planned for while that still runs the plan). The [release table](../guides/vllm-omni-releases.md) says what each row was read at; a row whose code was not read warns.",
		func(r *pipeline.Result) string { return r.Release }),
	text("config_sha256", "SHA-256 of `config_yaml`, hex; each process's preflight checks the file at `config_path` against it.",
		func(r *pipeline.Result) string { return r.ConfigSHA256 }),
	object("health", "How to tell the head serves the planned model, for a load balancer, a cloud health check or a deployment's smoke test.",
		func(r *pipeline.Result) *pipeline.Health { return &r.Health },
		text("host", "The head's address; `127.0.0.1` on one host.", func(h *pipeline.Health) string { return h.Host }),
		integer("port", "The API port.", func(h *pipeline.Health) int { return h.Port }),
		text("liveness_url", "`/health`: answers 200 once the API server runs.",
			func(h *pipeline.Health) string { return h.LivenessURL }),
		text("readiness_url", "`/v1/models`: ready only when it lists `model` (an empty list means the engines failed behind a running server).",
			func(h *pipeline.Health) string { return h.ReadinessURL }),
		text("readiness_command", "A check, run on a host of the plan (it calls `check_script_path`), that exits 0 only when `readiness_url` lists `model`. Elsewhere, poll `readiness_url` for the model's id.",
			func(h *pipeline.Health) string { return h.ReadinessCommand }),
		text("smoke_url", "`/v1/chat/completions` on the head: where `smoke_command` sends its request.",
			func(h *pipeline.Health) string { return h.SmokeURL }),
		text("smoke_command", "A check, run on a host of the plan (it calls `check_script_path`), that sends one text-only chat completion and exits 0 only when an answer comes back. Every request enters at prefill and must be handed to decode, and vllm-omni fails the request when that KV handoff fails, so this shows the PD pair works, which `/health` and `/v1/models` do not. Run it once after start, not as a frequent health probe: decode answers with its own `default_sampling_params`, which can take seconds.",
			func(h *pipeline.Health) string { return h.SmokeCommand }),
	),
}

// pipelineOutputNames are the outputs' names, in the table's order. Both
// entities write exactly these after planning, or mark them unknown.
var pipelineOutputNames = func() []string {
	names := make([]string, len(pipelineOutputTable))
	for i, o := range pipelineOutputTable {
		names[i] = o.name
	}
	return names
}()

// pipelineOutputAttributes are the outputs' schema declarations, shared by
// the data source and the resource.
func pipelineOutputAttributes() map[string]schema.Attribute {
	return fieldAttributes(pipelineOutputTable)
}
