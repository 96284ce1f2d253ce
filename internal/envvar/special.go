package envvar

// A stage's environment (runtime.env, or env in the `stages` dialect)
// reaches its process after everything the plan sets: a stage's drop-in
// lists it after the units' own Environment= lines, and systemd keeps the
// last assignment of a name (systemd.exec(5), Environment=), as vllm-omni's
// os.environ[key] = value does in a whole-pipeline process
// (vllm_omni/engine/stage_init_utils.py@d4a869fe:666-669). So a name the
// plan or vLLM treats specially would silently undo what the plan decided.
// Special is the one rule for those names: each is refused (the plan writes
// it, or writes something it contradicts, so the value has an attribute of
// its own) or judged as a path the processes write, like
// systemd.cache_dir. Any other name is the user's, and passes.
//
// Not in the table, on purpose: HF_HUB_OFFLINE and the other switches of
// vLLM and huggingface_hub that the plan neither writes nor reads; the
// secrets HF_TOKEN and HUGGING_FACE_HUB_TOKEN, which Secret judges with
// every other value; PYTHONPATH and the like, which change the preflight's
// Python and vllm's alike (both run in the process's environment), so the
// preflight checks what vllm will load.

// Treatment is what the plan does with a special name.
type Treatment int

const (
	// Refused: a plan-time error naming the attribute that sets it.
	Refused Treatment = iota + 1
	// WritablePath: an absolute directory the processes write, judged
	// against the units' sandbox as systemd.cache_dir is.
	WritablePath
)

// Special is a name the plan or vLLM treats specially.
type Special struct {
	Name      string
	Treatment Treatment
	// Reason says what the entry would do, after "runtime.env.NAME ...".
	Reason string
	// Fix says what to write instead.
	Fix string
	// Source is where the fact is read.
	Source string
}

// The units' own words, the plan's addresses and ports, the device mask
// and the paths the units set.
const (
	fixPorts   = "remove it: the plan allocates every port from port_range, and writes this one where its connector uses it"
	fixDevices = "remove it, and give the stage its GPUs with devices (prefill.devices, decode.devices, stage_overrides.<stage>.devices or the stage's runtime.devices), which the plan writes as the host's indices"
	fixCache   = "use a directory inside systemd.cache_dir, which the units open for writing, or remove it: the units set HF_HOME and HOME to systemd.cache_dir"
)

var specials = func() map[string]Special {
	list := []Special{
		{"OMNI_PD_CHECKS", Refused,
			"is a variable the units set themselves: the template's ExecStart splits it into the preflight's options, and a stage's entry, written after the plan's in its drop-in, replaces them, so the preflight loses its checks",
			"remove it or rename it", "internal/pipeline/units.go, unitChecksVar; systemd.exec(5), Environment=: the last assignment wins"},
		{"OMNI_PD_STAGE_ARGS", Refused,
			"is a variable the units set themselves: the template's ExecStart splits it into the stage's own vllm options (--port on the head, --headless on the others), and a stage's entry replaces them, so the head starts --headless with no --port",
			"remove it or rename it", "internal/pipeline/units.go, unitArgsVar; systemd.exec(5), Environment="},
		{"VLLM_HOST_IP", Refused,
			"is the address vLLM binds and advertises, which the plan writes from the stage's host",
			"remove it, and set the stage's host (prefill.host, decode.host or stage_overrides.<stage>.host)", "internal/pipeline/apply.go, writeHostEnv; vllm/envs.py, VLLM_HOST_IP"},
		{"VLLM_PORT", Refused,
			"makes vLLM take its internal ports upward from it, ports the plan neither allocates nor opens",
			"remove it: the plan allocates every port from port_range", "vllm/envs.py, VLLM_PORT (docs/usage/environment_variables.md: \"for vLLM's internal usage\"); vllm/utils, get_open_port"},
		{"VLLM_NIXL_SIDE_CHANNEL_PORT", Refused, "is a port the plan allocates and writes for NixlConnector", fixPorts, "internal/kvconnector/table.go, NixlConnector"},
		{"VLLM_NIXL_SIDE_CHANNEL_HOST", Refused, "is the address the plan writes for NixlConnector from the stage's host", "remove it, and set the stage's host", "internal/kvconnector/table.go, NixlConnector"},
		{"VLLM_MOONCAKE_BOOTSTRAP_PORT", Refused, "is a port the plan allocates and writes for MooncakeConnector, equal to the extra config's mooncake_bootstrap_port", fixPorts, "internal/kvconnector/table.go, MooncakeConnector"},
		{"LMCACHE_ENABLE_PD", Refused, "is written by the plan for LMCacheConnectorV1", "remove it: the plan writes LMCache's PD settings for the connector", "internal/kvconnector/table.go, LMCacheConnectorV1"},
		{"LMCACHE_PD_ROLE", Refused, "is written by the plan for LMCacheConnectorV1 from the stage's role", "remove it: the plan writes LMCache's PD settings for the connector", "internal/kvconnector/table.go, LMCacheConnectorV1"},
		{"LMCACHE_PD_PEER_HOST", Refused, "is written by the plan for LMCacheConnectorV1 from decode's host", "remove it, and set decode.host", "internal/kvconnector/table.go, LMCacheConnectorV1"},
		{"LMCACHE_PD_PEER_INIT_PORT", Refused, "is a port the plan allocates and writes for LMCacheConnectorV1", fixPorts, "internal/kvconnector/table.go, LMCacheConnectorV1"},
		{"LMCACHE_PD_PEER_ALLOC_PORT", Refused, "is a port the plan allocates and writes for LMCacheConnectorV1", fixPorts, "internal/kvconnector/table.go, LMCacheConnectorV1"},
		{"LMCACHE_PD_PROXY_HOST", Refused, "is written by the plan for LMCacheConnectorV1 from the head's host", "remove it: the plan writes LMCache's PD settings for the connector", "internal/kvconnector/table.go, LMCacheConnectorV1"},
		{"LMCACHE_PD_PROXY_PORT", Refused, "is a port the plan allocates and writes for LMCacheConnectorV1", fixPorts, "internal/kvconnector/table.go, LMCacheConnectorV1"},
		{"CUDA_VISIBLE_DEVICES", Refused,
			"narrows the GPUs the stage's process sees, while the plan keeps every GPU visible and writes the host's indices into the stage's devices: vllm-omni then reads those as positions in the mask, another GPU or none",
			fixDevices, "vllm_omni/entrypoints/stage_utils.py@d4a869fe:34-39 (resolve_stage_physical_devices maps devices through the mask) and :109-172 (_map_device_list)"},
		{"HIP_VISIBLE_DEVICES", Refused,
			"narrows the GPUs the stage's process sees on ROCm, where vllm-omni sets it with CUDA_VISIBLE_DEVICES from the stage's devices, the host's indices the plan writes",
			fixDevices, "vllm_omni/platforms/rocm/platform.py@d4a869fe:151-155"},
		{"ASCEND_RT_VISIBLE_DEVICES", Refused,
			"narrows the devices the stage's process sees, and vllm-omni reads it before CUDA_VISIBLE_DEVICES to map the stage's devices, the host's indices the plan writes",
			fixDevices, "vllm_omni/distributed/omni_connectors/utils/local_rank.py@d4a869fe:16"},
		{"PATH", Refused,
			"is set by the units: vllm's own directory first, where its environment keeps ninja and the other build tools vLLM runs, then the system's",
			"remove it, and set systemd.vllm_path to the vllm whose directory should come first", "internal/pipeline/units.go, unitPath"},
		{"HOME", WritablePath, "is where the units put the home of User (systemd.cache_dir), under which vLLM, Triton and torch keep their caches", fixCache, "internal/pipeline/units.go, serviceUnit; vllm/envs.py, VLLM_CACHE_ROOT (~/.cache/vllm)"},
		{"HF_HOME", WritablePath, "is the Hugging Face cache, where the weights are downloaded and locked", fixCache, "internal/pipeline/units.go, serviceUnit; huggingface_hub/constants.py, HF_HOME"},
		{"HF_HUB_CACHE", WritablePath, "is where huggingface_hub downloads the weights, in place of HF_HOME/hub", fixCache, "huggingface_hub/constants.py, HF_HUB_CACHE"},
		{"HUGGINGFACE_HUB_CACHE", WritablePath, "is the older name of HF_HUB_CACHE, where huggingface_hub downloads the weights", fixCache, "huggingface_hub/constants.py, HUGGINGFACE_HUB_CACHE"},
		{"XDG_CACHE_HOME", WritablePath, "is the cache root vLLM and huggingface_hub put their caches under when VLLM_CACHE_ROOT and HF_HOME are unset", fixCache, "vllm/envs.py, VLLM_CACHE_ROOT; huggingface_hub/constants.py, HF_HOME"},
		{"VLLM_CACHE_ROOT", WritablePath, "is where vLLM writes its compile caches", fixCache, "vllm/envs.py, VLLM_CACHE_ROOT"},
	}
	m := make(map[string]Special, len(list))
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}()

// Lookup says whether name is special, and how. Environment names are
// case-sensitive (POSIX, XBD 8.1), so `path` is not PATH.
func Lookup(name string) (Special, bool) {
	s, ok := specials[name]
	return s, ok
}

// Specials lists every special name, for tests and docs.
func Specials() []Special {
	out := make([]Special, 0, len(specials))
	for _, s := range specials {
		out = append(out, s)
	}
	return out
}
