package pipeline

import (
	"path"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// A unit's processes see the file system through the unit's sandbox
// (ProtectSystem=strict, ProtectHome=yes, PrivateTmp=yes, ...), so every
// path the plan hands them is judged against that sandbox, read from the
// very directives the unit renders (sandboxDirectives): a path the
// processes could not read, or a directory they could not keep writing to,
// is an error at plan time instead of a unit that fails on the machine.

// reachedPath is a path of the plan that a unit's processes open.
type reachedPath struct {
	attr  Path   // the attribute that sets it
	what  string // how messages name it
	value string
	need  systemd.Access
	fix   string // where to put it instead
	// stage names the base config's stage the value is in; "" for an
	// attribute.
	stage string
	// setting is how a stage's value is named before what: its engine
	// setting, or "" for an entry of its environment (runtime.env.HF_HOME).
	setting string
}

// unitSandbox is the sandbox of every unit the plan renders.
func unitSandbox(s ServiceSpec) (systemd.Sandbox, error) {
	return systemd.SandboxOf(sandboxDirectives(s.withDefaults(), nil))
}

// unitsSandbox is unitSandbox read once for a plan, for the steps that
// judge paths against it: the sandbox, or why it cannot be read.
type unitsSandbox struct {
	sandbox systemd.Sandbox
	err     error
	// mounts are, with a container launch, all its processes see of the
	// machine: the paths are judged against them instead.
	mounts []container.Mount
}

func sandboxOf(s ServiceSpec) unitsSandbox {
	sb, err := unitSandbox(s)
	return unitsSandbox{sandbox: sb, err: err}
}

// launchSandbox is what the processes of s see of the machine: the units'
// sandbox, or with a container launch the containers' mounts.
func launchSandbox(s Spec) unitsSandbox {
	if s.Container != nil {
		return unitsSandbox{mounts: containerMounts(s)}
	}
	return sandboxOf(s.Service)
}

// checkSandboxPaths judges the paths the inputs give the processes: the
// deploy config, a local model, and the systemd paths but
// environment_file, which the service manager reads before it sets the
// sandbox up (systemd.exec(5), EnvironmentFile=). A value another check
// refuses (not absolute, not plain) is not judged again.
func checkSandboxPaths(s Spec, sb unitsSandbox, ds *Diagnostics) {
	svc := AttrPath("systemd")
	paths := []reachedPath{
		{attr: AttrPath("config_path"), what: "config_path", value: s.ConfigPath, need: systemd.Read, fix: "write the deploy config elsewhere, such as " + DefaultConfigPath},
		{attr: AttrPath("model"), what: "model", value: s.Model, need: systemd.Read, fix: "keep the model's files elsewhere, such as /srv/models"},
	}
	for _, f := range []struct {
		name, v string
		need    systemd.Access
		fix     string
	}{
		{"cache_dir", s.Service.CacheDir, systemd.Write, "use a directory such as " + DefaultCacheDir + ", which the units create (CacheDirectory=), or one you create owned by the user"},
		{"vllm_path", s.Service.VLLMPath, systemd.Read, "install vllm-omni elsewhere, such as a virtualenv in /opt/vllm-omni"},
		{"python_path", s.Service.PythonPath, systemd.Read, "install vllm-omni elsewhere, such as a virtualenv in /opt/vllm-omni"},
	} {
		// In a container vllm and its Python are the image's.
		if systemd.PlainPath(f.v) != nil || s.Container != nil && f.name != "cache_dir" {
			continue
		}
		paths = append(paths, reachedPath{attr: svc.Attr(f.name), what: f.name, value: f.v, need: f.need, fix: f.fix})
	}
	judgePaths(sb, paths, ds)
}

// engineArgPaths are the engine settings vLLM reads as a local path when
// they hold one (vllm/engine/arg_utils.py, EngineArgs): the model and
// tokenizer, the Hugging Face config, and the download directory, where it
// takes a lock file and downloads the weights
// (vllm/model_executor/model_loader/weight_utils.py, get_lock).
var engineArgPaths = []struct {
	key  string
	need systemd.Access
}{{"model", systemd.Read}, {"tokenizer", systemd.Read}, {"hf_config_path", systemd.Read}, {"download_dir", systemd.Write}}

// checkStagePaths judges, against the units' sandbox, the local paths of
// the layout's stages' engine settings: where the user's engine_args set
// one, that attribute; where the base config does, the base config
// (basePath) and its stage (once per base stage).
func checkStagePaths(lay stageLayout, basePath Path, sb unitsSandbox, ds *Diagnostics) {
	var paths []reachedPath
	seen := map[string]bool{}
	for _, st := range lay.stages {
		args := st.engineArgs()
		for _, k := range engineArgPaths {
			r := reachedPath{what: k.key, need: k.need, fix: "keep it where the units can " + accessVerb(k.need), setting: "engine setting "}
			if k.need == systemd.Write {
				r.fix = "put it inside systemd.cache_dir, which the units open for writing, or remove it: vLLM then downloads into HF_HOME, the cache"
			}
			if v, ok := args[k.key]; ok {
				text, _ := v.(string)
				r.attr, r.value = st.path.Attr("engine_args").Attr(k.key), text
			} else {
				text, ok := st.base.stage.EngineString(k.key)
				if !ok || seen[st.base.stage.Describe()+"\x00"+k.key] {
					continue
				}
				seen[st.base.stage.Describe()+"\x00"+k.key] = true
				r.attr, r.value, r.stage = basePath, text, st.base.stage.Describe()
			}
			paths = append(paths, r)
		}
	}
	judgePaths(sb, paths, ds)
	checkStageModelIDs(paths, ds)
}

// checkStageModelIDs holds a stage's own model and tokenizer, where they
// are hub ids rather than local paths, to the rule the pipeline's model is
// held to (hubIDProblems): vLLM hands each to huggingface_hub before it
// downloads, and a stage whose id the hub refuses fails at start.
func checkStageModelIDs(paths []reachedPath, ds *Diagnostics) {
	for _, r := range paths {
		if r.what != "model" && r.what != "tokenizer" || !modelID.MatchString(r.value) {
			continue
		}
		problems := hubIDProblems(r.value)
		if len(problems) == 0 {
			continue
		}
		where := r.what
		if r.stage != "" {
			where = r.stage + "'s engine setting " + r.what
		}
		ds.errorf(diagcode.ModelInvalid, r.attr, where+" is not an id the Hugging Face hub accepts",
			"%q: %s. huggingface_hub refuses such an id (validate_repo_id), so vLLM fails when it starts the stage: write the id as the model's page shows it, or an absolute local path.",
			r.value, strings.Join(problems, "; "))
	}
}

// judgePaths reports each absolute path the units' sandbox keeps from the
// access its process needs.
func judgePaths(sb unitsSandbox, paths []reachedPath, ds *Diagnostics) {
	if sb.mounts != nil {
		judgeMounted(sb.mounts, paths, ds)
		return
	}
	sandbox, err := sb.sandbox, sb.err
	if err != nil {
		// A systemd path that cannot be written into a unit, which
		// checkService reports; otherwise a unit setting the sandbox reader
		// does not know, which no input can cause.
		if !ds.ErrorsUnder("systemd") {
			ds.errorf(diagcode.RenderFailed, nil, "the units' sandbox cannot be read", "%v", err)
		}
		return
	}
	for _, r := range paths {
		if !strings.HasPrefix(r.value, "/") {
			continue // an id, or a relative path another check refuses
		}
		d := sandbox.Judge(path.Clean(r.value), r.need)
		if d == nil {
			continue
		}
		where := ""
		if r.stage != "" {
			where = r.stage + "'s " + r.setting + r.what + ": "
		}
		summary, verb := r.what+" is where the units cannot "+accessVerb(r.need), accessVerb(r.need)
		if d.Root == "/" {
			ds.errorf(diagcode.SystemdPathProtected, r.attr, summary,
				"%s%q is in no directory the units open for writing, and their %s makes the rest read-only, so their processes cannot %s it; %s.", where, r.value, d.Setting, verb, r.fix)
			continue
		}
		ds.errorf(diagcode.SystemdPathProtected, r.attr, summary,
			"%s%q is under %s, which the units' %s %s, so their processes cannot %s it; %s.", where, r.value, d.Root, d.Setting, d.Reason, verb, r.fix)
	}
}

func accessVerb(a systemd.Access) string {
	if a == systemd.Write {
		return "write"
	}
	return "read"
}
