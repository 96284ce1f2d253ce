package pipeline

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// PreflightExit is the status the preflight exits with when the machine
// does not match the plan. The units list it in RestartPreventExitStatus, so
// a drifted machine fails once, clearly, instead of restarting forever.
const PreflightExit = 78 // EX_CONFIG

// CheckScript is the script every host keeps at check_script_path. Its
// `ready` and `smoke` are health's commands; its `machine` runs every check
// of one machine the operator is handed (the examples' check_commands) and
// exits 1 when any fails, 2 on a usage error, so that a script of it
// fails as its checks do; its `preflight` checks, in the
// Python that runs vllm, that the installed
// vllm-omni is the release the plan is for, that its vLLM is the major.minor
// that release needs, and that the deploy config is the plan's, by SHA-256;
// then, before any GPU memory is taken, that the host has the GPUs the
// process is given, that an inherited CUDA_VISIBLE_DEVICES (through which
// vllm-omni maps the config's devices) leaves each of them its own index,
// and that every dotted path the release will import for
// the process resolves. Arguments: the version as the user gave it, "line"
// or "release", the vLLM line, the config path and its SHA-256; then
// options (--gpus N, --import KEY=DOTTED.PATH, --transport CONNECTOR=MODULE,
// --edge-transport CONNECTOR=MODULE;
// on a stage's unit --head ADDRESS:PORT --head-wait SECONDS --head-unit
// UNIT, the head's omni master, waited for once the checks pass when the
// command is --headless), and,
// optionally, `--` and the command to exec once everything matches.
// With a command, the first check is that its script runs in this Python:
// its "#!" line, its "#!/usr/bin/env" command on PATH, or the /bin/sh
// trampoline pip, virtualenv and uv write for a long path or one with a
// space (python_of); a virtual environment counts as its own Python.
// Versions are read from the installed distributions' metadata
// (importlib.metadata); the imports come last, once the versions match, so
// that a failed one means the release itself lacks what the plan names.
//
// The script is pd-check.py beside this file, embedded: Python a reader
// and a linter can open as Python. Its UNIT_WORDS are unitChecksVar and
// unitArgsVar (TestCheckScriptRemovesTheUnitWords).
//
//go:embed pd-check.py
var CheckScript string

// checkScriptSHA256 is CheckScript's hash, which the content id holds.
var checkScriptSHA256 = func() string {
	sum := sha256.Sum256([]byte(CheckScript))
	return hex.EncodeToString(sum[:])
}()

// sharedChecks are the preflight's words every process of the plan
// shares: what the plan expects of the machine.
func (lp launchPlan) sharedChecks() []string {
	want, mode := lp.release.Version, "release"
	if v := lp.asked; v != "" {
		if parsed, err := releases.ParseVersion(v); err == nil && !parsed.HasPatch {
			want, mode = v, "line"
		}
	}
	return []string{want, mode, lp.release.VLLM, lp.configPath, lp.configSHA}
}

// processChecks are the preflight's options for one process: what its
// stages need of the machine. --gpus N asks for GPU indices 0 to N-1 as
// the process sees them: on the host its highest index plus one; in a
// container, which numbers its GPUs from 0 (container.LocalIndex), their
// count.
func processChecks(proc Process, inContainer bool) []string {
	var argv []string
	switch {
	case len(proc.Devices) > 0 && inContainer:
		argv = append(argv, "--gpus", strconv.Itoa(len(slices.Compact(slices.Sorted(slices.Values(proc.Devices))))))
	case len(proc.Devices) > 0:
		argv = append(argv, "--gpus", strconv.Itoa(slices.Max(proc.Devices)+1))
	}
	for _, t := range proc.checks.transports {
		argv = append(argv, "--transport", t)
	}
	for _, t := range proc.checks.edgeTransports {
		argv = append(argv, "--edge-transport", t)
	}
	return append(argv, importWords(proc.checks.imports)...)
}

// importWords are the preflight's options that import KEY=DOTTED.PATH.
func importWords(imports []string) []string {
	var argv []string
	for _, i := range imports {
		argv = append(argv, "--import", i)
	}
	return argv
}

// preflightChecks is what a process's preflight imports: KEY=DOTTED.PATH
// for each path the release imports for the process's stages (their
// custom_process_input_func, scheduler_cls, kv_connector_module_path), and
// CONNECTOR=MODULE for the transport package each KV connector the
// process loads needs, and for each omni connector its stages' edges name.
type preflightChecks struct {
	imports    []string
	transports []string
	// edgeTransports only warn when they do not import: vllm-omni builds an
	// edge connector at its first transfer, and 0.24.0's stage-based launch
	// of the stage_args pipelines hands each stage its input through
	// /dev/shm instead (engine/stage_init_utils.py@d4a869fe:1060-1061,
	// entrypoints/cli/serve.py@d4a869fe:843-847), so a machine without the
	// package may still serve.
	edgeTransports []string
}

// importedPaths are the stage keys whose values the release imports by
// dotted path when it starts the stage; a path inside kv_transfer_config
// names the connector's own module.
var importedPaths = [][]string{
	{"custom_process_input_func"},
	{"engine_args", "scheduler_cls"},
	{"scheduler_cls"},
	{"engine_args", "kv_transfer_config", "kv_connector_module_path"},
	{"kv_transfer_config", "kv_connector_module_path"},
}

// stageChecks reads, per stage of the planned config, what its process's
// preflight imports. connectors are the PD pair's KV connector classes.
func stageChecks(doc *stageconfig.Document, connectors []string) map[int]preflightChecks {
	out := map[int]preflightChecks{}
	for _, st := range doc.Stages() {
		id, ok := st.ID()
		if !ok {
			continue
		}
		var c preflightChecks
		for _, key := range importedPaths {
			if v, ok := st.String(key...); ok && v != "" {
				c.imports = append(c.imports, key[len(key)-1]+"="+v)
			}
		}
		for _, child := range st.KVTransferSettings().Get("kv_connector_extra_config").Entries("connectors") {
			if v, ok := child.String("kv_connector_module_path"); ok && v != "" {
				c.imports = append(c.imports, "kv_connector_module_path="+v)
			}
		}
		c.edgeTransports = edgeTransports(doc, st)
		if st.KVTransferSettings().IsMapping() {
			for _, name := range connectors {
				if mod := transportModule(name); mod != "" {
					c.transports = append(c.transports, name+"="+mod)
				}
			}
		}
		out[id] = c
	}
	return out
}

// edgeTransports are CONNECTOR=MODULE for each connector the stage's edges
// name (input_connectors, output_connectors) whose class imports a
// transfer engine, each once.
func edgeTransports(doc *stageconfig.Document, st stageconfig.Stage) []string {
	classes := map[string]string{}
	for _, def := range doc.ConnectorDefinitions() {
		if class, ok := def.Settings.String("name"); ok {
			classes[def.Name] = class
		}
	}
	var out []string
	for _, key := range []string{"input_connectors", "output_connectors"} {
		for _, ref := range st.ConnectorRefs(key) {
			class := classes[ref.Name]
			if mod := releases.EdgeTransport(class); mod != "" && !containsString(out, class+"="+mod) {
				out = append(out, class+"="+mod)
			}
		}
	}
	return out
}

// mergeChecks is what a whole-pipeline process imports: every stage's
// paths, each once, in stage order.
func mergeChecks(byStage map[int]preflightChecks) preflightChecks {
	var out preflightChecks
	for _, id := range sortedKeys(byStage) {
		c := byStage[id]
		for _, i := range c.imports {
			if !containsString(out.imports, i) {
				out.imports = append(out.imports, i)
			}
		}
		for _, t := range c.transports {
			if !containsString(out.transports, t) {
				out.transports = append(out.transports, t)
			}
		}
		for _, t := range c.edgeTransports {
			if !containsString(out.edgeTransports, t) {
				out.edgeTransports = append(out.edgeTransports, t)
			}
		}
	}
	return out
}
