package pipeline

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/envvar"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// modelID matches the form the provider takes a Hugging Face repository id
// in: org/name, in the characters the hub's names use. hubIDProblems adds
// the hub's own rules.
var modelID = regexp.MustCompile(`^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$`)

// hubNameMax is the longest repository name huggingface_hub accepts.
const hubNameMax = 96

// hubIDProblems are the reasons huggingface_hub's validate_repo_id
// (src/huggingface_hub/utils/_validators.py@ee0a4510:28-36, 131-148),
// which vLLM calls before it downloads a model, refuses an id of modelID's
// form, in words; none when it accepts it. Its REPO_ID_REGEX wants a word
// character at each end of the namespace and of the name (\b), and at most
// 96 characters in the name; then it refuses "--" and ".." anywhere and a
// ".git" ending. The hub's models cache names a repository
// models--<org>--<name>, which "--" would make ambiguous.
func hubIDProblems(id string) []string {
	var out []string
	org, name, _ := strings.Cut(id, "/")
	for _, part := range []struct{ what, v string }{{"the organization", org}, {"the name", name}} {
		if strings.ContainsAny(part.v[:1], ".-") {
			out = append(out, fmt.Sprintf("%s starts with %q", part.what, part.v[:1]))
		}
		if strings.ContainsAny(part.v[len(part.v)-1:], ".-") {
			out = append(out, fmt.Sprintf("%s ends with %q", part.what, part.v[len(part.v)-1:]))
		}
	}
	if len(name) > hubNameMax {
		out = append(out, fmt.Sprintf("the name has %d characters, more than %d", len(name), hubNameMax))
	}
	for _, pair := range []string{"--", ".."} {
		if strings.Contains(id, pair) {
			out = append(out, fmt.Sprintf("it holds %q", pair))
		}
	}
	if strings.HasSuffix(id, ".git") {
		out = append(out, `it ends with ".git"`)
	}
	return out
}

// checkSpec checks the inputs that need no base config, the paths they
// give the processes against the units' sandbox sb; it decides nothing.
// It never stops early: every problem is reported.
func checkSpec(s Spec, sb unitsSandbox, ds *Diagnostics) {
	checkModel(s.Model, ds)
	if s.Format != "" {
		if _, err := stageconfig.ParseDialect(s.Format); err != nil {
			ds.errorf(diagcode.FormatUnknown, AttrPath("format"), "unknown format", "%v.", err)
		}
	}
	if s.Preset != "" && s.BaseConfig != "" {
		ds.errorf(diagcode.PresetAndBaseConfig, AttrPath("base_config"), "preset and base_config both set",
			"base_config replaces the preset; remove one of them.")
	}
	if s.ConfigPath != "" {
		checkPathString(ds, AttrPath("config_path"), s.ConfigPath, "config_path", diagcode.ConfigPathNotAbsolute, diagcode.ConfigPathControlCharacter)
	}
	checkRole(ds, AttrPath(prefillKey), s.Prefill)
	checkRole(ds, AttrPath(decodeKey), s.Decode)
	if s.GPUs != nil && *s.GPUs < 1 {
		ds.errorf(diagcode.GPUsRange, AttrPath("gpus"), "gpus must be at least 1", "gpus is %d; set the number of GPUs on each host.", *s.GPUs)
	}
	if s.SplitStage != nil && *s.SplitStage < 0 {
		ds.errorf(diagcode.SplitStageRange, AttrPath("split_stage"), "split_stage must be a stage id", "split_stage is %d; stage ids start at 0: set it to the id of the stage to split.", *s.SplitStage)
	}
	checkPortInputs(s, ds)
	checkService(ds, s.Service)
	checkSandboxPaths(s, sb, ds)
	checkMachinePaths(s, ds)
	checkContainer(s, ds)
}

// requestedFormat is the dialect format asks for, or "" for the base
// config's own (decided once it is loaded, and by the release). checkSpec
// reports a format it cannot parse.
func requestedFormat(spec Spec) stageconfig.Dialect {
	f, err := stageconfig.ParseDialect(spec.Format)
	if spec.Format == "" || err != nil {
		return ""
	}
	return f
}

func checkModel(m string, ds *Diagnostics) {
	path := AttrPath("model")
	switch {
	case m == "":
		ds.errorf(diagcode.ModelEmpty, path, "model is empty", "set model to a Hugging Face id such as \"Qwen/Qwen3-Omni-30B-A3B-Instruct\" or an absolute local path.")
	case strings.HasPrefix(m, "/"):
		checkPathChars(ds, path, m, "model", diagcode.ModelControlCharacter)
	case !modelID.MatchString(m):
		ds.errorf(diagcode.ModelInvalid, path, "model is not a model id or an absolute path",
			"%q: use an id of the form org/name (letters, digits, '.', '_', '-') such as \"Qwen/Qwen3-Omni-30B-A3B-Instruct\", or an absolute local path.", m)
	default:
		if problems := hubIDProblems(m); len(problems) > 0 {
			ds.errorf(diagcode.ModelInvalid, path, "model is not an id the Hugging Face hub accepts",
				"%q: %s. huggingface_hub refuses such an id (validate_repo_id: each part starts and ends with a letter, digit or '_', no \"--\" or \"..\", no \".git\" ending, a name of at most %d characters), so vLLM fails at start: write the id as the model's page shows it, such as \"Qwen/Qwen3-Omni-30B-A3B-Instruct\", or an absolute local path.",
				m, strings.Join(problems, "; "), hubNameMax)
		}
	}
}

// checkPathString rejects what a path must not hold: it ends up in a shell
// command and in a process's argv, where a control character or a leading
// dash would change what runs. The codes are the attribute's (what's).
func checkPathString(ds *Diagnostics, path Path, v, what string, notAbsolute, controlCharacter diagcode.Code) {
	if !strings.HasPrefix(v, "/") {
		ds.errorf(notAbsolute, path, what+" must be an absolute path", "%q does not start with /; write the full path on the host.", v)
		return
	}
	checkPathChars(ds, path, v, what, controlCharacter)
}

// checkPathChars is checkPathString for a path known to be absolute.
func checkPathChars(ds *Diagnostics, path Path, v, what string, controlCharacter diagcode.Code) {
	for _, r := range v {
		// Cf (format) characters, such as U+202E, are invisible and can
		// make the path shown in a plan read differently from what runs;
		// U+2028 and U+2029 break lines as a newline does.
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) {
			ds.errorf(controlCharacter, path, what+" holds a control character",
				"%q: remove newlines, tabs, other control characters and invisible formatting characters (such as U+202E).", v)
			return
		}
		if envvar.Noncharacter(r) {
			ds.errorf(controlCharacter, path, what+" holds a Unicode noncharacter",
				"%q holds %U, a noncharacter, with which systemd refuses to load the unit that names it: remove it.", v, r)
			return
		}
	}
}

func checkRole(ds *Diagnostics, path Path, r RoleSpec) {
	if r.TensorParallelSize != nil && *r.TensorParallelSize < 1 {
		ds.errorf(diagcode.TensorParallelSizeRange, path.Attr("tensor_parallel_size"), "tensor_parallel_size must be at least 1", "it is %d; set 1 or more (the GPUs each side spans).", *r.TensorParallelSize)
	}
	if r.MaxNumSeqs != nil && *r.MaxNumSeqs < 1 {
		ds.errorf(diagcode.MaxNumSeqsRange, path.Attr("max_num_seqs"), "max_num_seqs must be at least 1", "it is %d; set 1 or more (the recipe uses 16 for prefill, 64 for decode).", *r.MaxNumSeqs)
	}
	checkMemory(ds, path, r.GPUMemoryUtilization)
	checkDevices(ds, path.Attr("devices"), r.Devices)
	if r.Host != "" {
		checkHost(ds, path.Attr("host"), r.Host)
	}
	checkEngineArgs(ds, path.Attr("engine_args"), r.EngineArgs, roleManagedKeys)
}

func checkMemory(ds *Diagnostics, path Path, v *float64) {
	if v != nil && (*v <= 0 || *v > 1) {
		ds.errorf(diagcode.GPUMemoryUtilizationRange, path.Attr("gpu_memory_utilization"), "gpu_memory_utilization must be in (0, 1]",
			"it is %g; it is the share of one GPU's memory the stage may use: set a fraction above 0 and at most 1, such as 0.9.", *v)
	}
}

func checkDevices(ds *Diagnostics, path Path, devs []int) {
	seen := map[int]bool{}
	for i, d := range devs {
		if d < 0 {
			ds.errorf(diagcode.DeviceNegative, path.Index(i), "a device index is negative", "device %d: GPU indices start at 0; list the host's GPUs as nvidia-smi -L numbers them.", d)
		}
		if seen[d] {
			ds.errorf(diagcode.DeviceRepeated, path.Index(i), "a device is listed twice", "device %d appears more than once; list each GPU once.", d)
		}
		seen[d] = true
	}
	if devs != nil && len(devs) == 0 {
		ds.errorf(diagcode.DevicesEmpty, path, "devices is empty", "list at least one GPU index, or leave devices unset to place the stage automatically.")
	}
}

// Engine settings the provider computes for the PD pair: setting them in
// engine_args would fight the typed attributes, so each names its attribute.
var roleManagedKeys = map[string]string{
	"tensor_parallel_size":   "tensor_parallel_size",
	"max_num_seqs":           "max_num_seqs",
	"gpu_memory_utilization": "gpu_memory_utilization",
	"kv_transfer_config":     "the connector attribute",
	"model_stage":            "split_stage",
}

// Settings a stage override has typed attributes for.
var overrideManagedKeys = map[string]string{
	"max_num_seqs":           "max_num_seqs",
	"gpu_memory_utilization": "gpu_memory_utilization",
	"model_stage":            "the stage_overrides key",
}

func checkEngineArgs(ds *Diagnostics, path Path, args map[string]any, managed map[string]string) {
	for _, k := range sortedStrings(args) {
		if attr, ok := managed[k]; ok {
			ds.errorf(diagcode.EngineArgsManagedKey, path.Attr(k), "this engine setting has its own attribute",
				"%s is computed by the provider; set %s instead of engine_args.%s.", k, attr, k)
		}
		if err := stageconfig.CheckValue(args[k]); err != nil {
			ds.errorf(diagcode.EngineArgsValue, path.Attr(k), "value cannot be written to YAML", "%v; use a finite number, a string, a bool, a list or an object.", err)
		}
		checkNoInterpolation(ds, path.Attr(k), args[k])
	}
}

func checkPortInputs(s Spec, ds *Diagnostics) {
	if s.PortRange != nil {
		r := *s.PortRange
		path := AttrPath("port_range")
		switch {
		case r.First < 1 || r.First > 65535:
			ds.errorf(diagcode.PortRangeInvalid, path.Attr("first"), "port_range.first is not a port", "it is %d; use 1-65535 (1024 and above avoids privileged ports).", r.First)
		case r.Last < 1 || r.Last > 65535:
			ds.errorf(diagcode.PortRangeInvalid, path.Attr("last"), "port_range.last is not a port", "it is %d; use 1-65535.", r.Last)
		case r.First > r.Last:
			ds.errorf(diagcode.PortRangeInverted, path, "port_range is empty", "first (%d) is above last (%d); swap them.", r.First, r.Last)
		}
	}
	for _, v := range s.ReservedPorts {
		if v < 1 || v > 65535 {
			ds.errorf(diagcode.ReservedPortInvalid, AttrPath("reserved_ports"), "a reserved port is not a port", "%d is outside 1-65535; use a port in that range.", v)
		}
	}
	check := func(path Path, v *int) {
		if v != nil && (*v < 1 || *v > 65535) {
			ds.errorf(diagcode.PortInvalid, path, "not a port", "%d is outside 1-65535; use a port in that range.", *v)
		}
	}
	check(AttrPath("api_port"), s.APIPort)
	check(AttrPath(prefillKey, "bootstrap_port"), s.Prefill.BootstrapPort)
	check(AttrPath(decodeKey, "bootstrap_port"), s.Decode.BootstrapPort)
	warnSharedPorts(s, ds)
}

func sortedStrings[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func describeInts(xs []int) string {
	return strings.Trim(strings.ReplaceAll(fmt.Sprint(xs), " ", ", "), "[]")
}

// unixUser matches a portable user name (useradd's default rule).
var unixUser = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// overflowUsers are the names of the kernel's overflow user (65534):
// "nobody", and "nfsnobody" on older Red Hat systems.
var overflowUsers = map[string]bool{"nobody": true, "nfsnobody": true}

// systemDirs are the directories the Filesystem Hierarchy Standard (3.0,
// chapters 3 to 5) gives the system's own files, and their parents: a
// cache_dir there opens them for writing.
var systemDirs = map[string]bool{
	"/": true, "/bin": true, "/boot": true, "/dev": true, "/etc": true, "/lib": true, "/lib32": true, "/lib64": true,
	"/opt": true, "/proc": true, "/run": true, "/sbin": true, "/srv": true, "/usr": true, "/var": true,
	"/usr/bin": true, "/usr/include": true, "/usr/lib": true, "/usr/libexec": true, "/usr/local": true, "/usr/sbin": true, "/usr/share": true,
	"/var/cache": true, "/var/lib": true, "/var/local": true, "/var/log": true, "/var/opt": true, "/var/spool": true, "/var/mail": true,
}

// cleanPath is path.Clean, for functions where path is an attribute's.
func cleanPath(p string) string { return path.Clean(p) }

// unitPrefix matches what a unit name may hold before its suffix.
var unitPrefix = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

// maxUnitPrefix leaves room in systemd's 255-character unit names
// (UNIT_NAME_MAX) for "-stage@<n>.service".
const maxUnitPrefix = 200

// checkService checks the systemd settings; they reach unit files and
// command lines.
func checkService(ds *Diagnostics, s ServiceSpec) {
	path := AttrPath("systemd")
	if s.User != "" && !unixUser.MatchString(s.User) {
		ds.errorf(diagcode.SystemdUserInvalid, path.Attr("user"), "user is not a user name",
			"%q: use a system account name such as \"vllm-omni\" (lower-case letters, digits, '_', '-'; at most 32). Running as root is not offered.", s.User)
	}
	if s.User == "root" {
		ds.errorf(diagcode.SystemdUserInvalid, path.Attr("user"), "the processes may not run as root", "use a system account created for them, such as \"vllm-omni\".")
	}
	if overflowUsers[s.User] {
		ds.errorf(diagcode.SystemdUserInvalid, path.Attr("user"), "the processes may not run as "+s.User,
			"%q is the kernel's overflow user, which owns whatever files and processes cannot be mapped to another: every service run as it shares its identity, so when the plan's last unit on a host stops, the units' RemoveIPC=yes removes the shared memory and semaphores of every service run as it, and each could signal the others; systemd says so when it loads every unit (\"Special user %s configured, this is not safe!\", src/core/load-fragment.c, config_parse_user_group_compat; systemd-analyze verify prints it for each). Use a system account created for the processes, such as \"vllm-omni\".", s.User, s.User)
	}
	if s.CacheDir != "" && systemDirs[cleanPath(s.CacheDir)] {
		ds.errorf(diagcode.CacheDirSystem, path.Attr("cache_dir"), "cache_dir is one of the system's own directories",
			"%q: the units open cache_dir for writing (ReadWritePaths=) and point HF_HOME and HOME at it, so the processes could write all of it, which undoes the sandbox's read-only system (ProtectSystem=strict), and the model cache would land among the system's files. Use a directory of its own, such as %q, which the units create (CacheDirectory=).", s.CacheDir, DefaultCacheDir)
	}
	for _, f := range []struct {
		name, v     string
		notAbsolute diagcode.Code
	}{
		{"cache_dir", s.CacheDir, diagcode.CacheDirNotAbsolute},
		{"vllm_path", s.VLLMPath, diagcode.VLLMPathNotAbsolute},
		{"python_path", s.PythonPath, diagcode.PythonPathNotAbsolute},
		{"environment_file", s.EnvironmentFile, diagcode.EnvironmentFileNotAbsolute},
	} {
		if f.v == "" {
			continue
		}
		if !strings.HasPrefix(f.v, "/") {
			ds.errorf(f.notAbsolute, path.Attr(f.name), f.name+" must be an absolute path", "%q does not start with /; write the full path on the host.", f.v)
			continue
		}
		if err := systemd.PlainPath(f.v); err != nil {
			ds.errorf(diagcode.SystemdPathInvalid, path.Attr(f.name), f.name+" cannot be written into a unit", "%v.", err)
		}
	}
	switch p := s.UnitPrefix; {
	case p == "":
	case !unitPrefix.MatchString(p) || strings.HasPrefix(p, "-"):
		ds.errorf(diagcode.SystemdUnitPrefixInvalid, path.Attr("unit_prefix"), "unit_prefix cannot start a unit name",
			"%q: use letters, digits, '_', '.', ':' and '-', not first, such as \"vllm-omni-a\".", p)
	case len(p) > maxUnitPrefix:
		ds.errorf(diagcode.SystemdUnitPrefixInvalid, path.Attr("unit_prefix"), "unit_prefix is too long",
			"it has %d characters; use at most %d, so that <unit_prefix>-stage@<n>.service stays within systemd's 255-character unit names.", len(p), maxUnitPrefix)
	}
	if w := s.HeadWaitSeconds; w != nil && (*w < 10 || *w > 86400) {
		ds.errorf(diagcode.SystemdHeadWaitRange, path.Attr("head_wait_seconds"), "head_wait_seconds is out of range",
			"it is %d; use 10 to 86400 seconds (model loading takes minutes).", *w)
	}
}

// defaultPython is the Python the preflight runs in when python_path is
// unset: the python3 beside vllm, where a virtualenv, conda or a Python
// built into its own prefix keep it. /usr/local/bin is the exception: two
// system-wide installs put vllm there, a Python built into /usr/local (the
// python Docker images: /usr/local/bin/python3) and the distribution's
// pip (Debian, Ubuntu and the images built on them: /usr/bin/python3).
// vLLM's own image is neither: it installs into /opt/venv
// (docker/Dockerfile@28be48fa, uv venv), where vllm_path is
// /opt/venv/bin/vllm and the default python3 beside it is right. There the default is python3 as
// the unit's PATH finds it (pythonArgv): /usr/local/bin first, then
// /usr/bin. Either way the preflight checks that vllm's own first line
// names that Python, and names the one to set when it does not.
func defaultPython(vllm string) string {
	if dir := path.Dir(vllm); dir != "/usr/local/bin" {
		return path.Join(dir, "python3")
	}
	return "python3"
}

// pythonArgv starts the Python: a path as it is, a bare name (only the
// default) through /usr/bin/env on the unit's PATH, which starts with
// vllm's own directory.
func pythonArgv(python string) []string {
	if strings.HasPrefix(python, "/") {
		return []string{python}
	}
	return []string{"/usr/bin/env", python}
}

func (s ServiceSpec) withDefaults() ServiceSpec {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&s.User, DefaultServiceUser)
	def(&s.CacheDir, DefaultCacheDir)
	if s.inImage {
		def(&s.VLLMPath, ImageVLLMPath)
	}
	def(&s.VLLMPath, DefaultVLLMPath)
	def(&s.EnvironmentFile, DefaultEnvironmentFile)
	if s.inImage {
		def(&s.PythonPath, ImagePythonPath)
	}
	def(&s.PythonPath, defaultPython(s.VLLMPath))
	def(&s.UnitPrefix, DefaultUnitPrefix)
	def(&s.CheckScriptPath, DefaultCheckScriptPath)
	if s.HeadWaitSeconds == nil {
		w := DefaultHeadWaitSeconds
		s.HeadWaitSeconds = &w
	}
	return s
}
