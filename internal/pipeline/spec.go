package pipeline

import (
	"math"

	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
)

// Spec is everything a user can say about a pipeline. Optional numbers are
// pointers so that "unset" differs from zero; every default is applied by
// the planner, never by the caller.
type Spec struct {
	Model      string
	Preset     string // embedded base config; inferred from Model when empty
	BaseConfig string // YAML text of a base config in either dialect
	Format     string // output dialect; "" means the base config's (stage_args for presets)
	Pipeline   string // `pipeline:` key in the stages dialect; "" means the release's registered PD pipeline

	// VLLMOmniVersion is the vllm-omni release the machines run: a line
	// "X.Y", a release "X.Y.Z" or "X.Y.ZrcN"; "" means the newest release
	// that runs the plan's PD natively.
	VLLMOmniVersion string

	SplitStage *int // stage id to split; nil means the thinker

	Prefill RoleSpec
	Decode  RoleSpec

	// StageOverrides is keyed by model_stage name (talker, code2wav, ...).
	StageOverrides map[string]StageOverride

	GPUs          *int // GPUs on each host; nil means no limit is checked
	Connector     ConnectorSpec
	APIPort       *int
	PortRange     *PortRange
	ReservedPorts []int
	ConfigPath    string

	// Service says how each process runs as a systemd service.
	Service ServiceSpec

	// Container runs each process in its own container of the release's
	// image, started and supervised by its unit; nil runs a host install.
	Container *ContainerSpec

	// Previous holds the allocations of an earlier plan that should be kept
	// while they stay valid. The resource sets it from its state; the data
	// source leaves it nil.
	Previous *Allocations
}

// ServiceSpec configures the systemd unit of every process. Empty fields
// take the defaults below.
type ServiceSpec struct {
	User            string // the account the processes run as
	CacheDir        string // HF_HOME: where models are downloaded, writable by User
	VLLMPath        string // absolute path of the vllm executable
	PythonPath      string // the Python vllm runs in, for the preflight; default: python3 beside VLLMPath
	EnvironmentFile string // optional file of secrets (HF_TOKEN=...), read by systemd
	UnitPrefix      string // unit names: <prefix>.service, <prefix>-stage@<n>.service
	HeadWaitSeconds *int   // how long a headless process waits for the head
	CheckScriptPath string // where the hosts keep CheckScript

	// inImage says vllm runs in the release's image (Spec.Container), whose
	// paths VLLMPath and PythonPath then default to: Spec.service sets it.
	inImage bool
}

// Service defaults.
const (
	DefaultServiceUser     = "vllm-omni"
	DefaultCacheDir        = "/var/cache/vllm-omni"
	DefaultVLLMPath        = "/usr/local/bin/vllm"
	DefaultEnvironmentFile = "/etc/vllm-omni/vllm-omni.env"
	DefaultUnitPrefix      = "vllm-omni"
	DefaultHeadWaitSeconds = 600
	// DefaultCheckScriptPath is where the hosts keep CheckScript: beside
	// the machine's own programs, readable in the units' sandbox.
	DefaultCheckScriptPath = "/usr/local/lib/vllm-omni/pd-check.py"
	// SingleHost is launches[*].host on a pipeline whose stages name no
	// host: a key for maps over hosts, not an address.
	SingleHost = "local"
)

// RoleSpec configures the prefill or the decode stage.
type RoleSpec struct {
	Devices              []int
	TensorParallelSize   *int
	MaxNumSeqs           *int
	GPUMemoryUtilization *float64
	BootstrapPort        *int
	Host                 string
	// EngineArgs is merged over the split stage's engine args. Values are
	// nil, bool, string, int64, float64, []any or map[string]any.
	EngineArgs map[string]any
}

// StageOverride configures one of the stages that are not split.
type StageOverride struct {
	Devices              []int
	MaxNumSeqs           *int
	GPUMemoryUtilization *float64
	Host                 string
	EngineArgs           map[string]any
	// NumReplicas runs that many copies of the stage, each on its own
	// devices; vllm-omni balances requests across them.
	NumReplicas *int
}

// ConnectorSpec chooses the KV connector between prefill and decode.
type ConnectorSpec struct {
	Name        string // "" means DefaultConnector
	Protocol    string // Mooncake transport: tcp or rdma
	DeviceName  string // RDMA NIC for Mooncake
	ExtraConfig map[string]any
	KVBoth      bool // both sides take kv_role kv_both
}

// PortRange bounds the ports the allocator may hand out, both ends included.
type PortRange struct {
	First, Last int
}

// Allocations are the choices a plan made that a resource keeps stable:
// ports by name and devices by DeviceKeys ("prefill", "decode",
// "stage:<model_stage>", "stage#<id>"), each on the host it was made on. A
// port or GPU is a resource of one machine: an allocation is kept only
// where it was made (Allocations.HostOf says which host of a new plan that
// is), never carried to another host, where it means nothing.
type Allocations struct {
	Ports   map[HostKey]int
	Devices map[HostKey][]int
	// Head is the host of the plan's first stage, the one that serves the
	// API; "" on a single host that no stage names.
	Head string
	// Release is the release planned for, kept while vllm_omni_version is
	// unset and it still runs the plan: a provider that knows a newer
	// release does not move running machines to it.
	Release string
}

// HostKey names one allocation: a port's name or a stage's DeviceKeys key,
// on the host it was made on ("" on a single host that no stage names).
type HostKey struct {
	Host string
	Name string
}

// HostOf is the host, as this earlier plan named it, of the machine a new
// plan calls host, given the new plan's head. Hosts are addresses, so the
// same address is the same machine. A single host that names no address is
// the machine that serves the API: when one of the two plans is such a
// plan, its host and the other's head are the same machine, so adding
// hosts to a one-host pipeline keeps the head's ports and GPUs, and the
// stages moved to the new hosts start afresh there.
func (a *Allocations) HostOf(host, head string) string {
	if host == head && (host == "" || a.Head == "") {
		return a.Head
	}
	return host
}

// MaxWhole is the largest whole number any numeric setting may take, typed
// attribute or stage_overrides entry alike: it keeps every count, index and
// size a Go int, and products of them (tensor × pipeline parallel) far from
// overflow. Nothing real comes near it.
const MaxWhole = math.MaxInt32

// Defaults, as in vllm-omni's PD recipe.
const (
	DefaultAPIPort        = 8091
	DefaultPortRangeFirst = 25201
	DefaultPortRangeLast  = 25300
	DefaultPrefillMaxSeqs = 16
	DefaultDecodeMaxSeqs  = 64
	DefaultConnector      = kvconnector.Default // the one whose prefill returns remote_request_id (releases.HandoffGate)
	DefaultTensorParallel = 1
	defaultGPUMemoryShare = 0.9 // vLLM's gpu_memory_utilization default
	connectorZMQBasePort  = 50051
	prefillKey, decodeKey = "prefill", "decode"
	defaultHost           = ""
	// sharedDeviceHeadroom: above this sum on one GPU a plan warns. vllm-omni's
	// own configs run co-located stages at up to 0.95.
	sharedDeviceHeadroom   = 0.95
	kvProducer, kvConsumer = "kv_producer", "kv_consumer"
)
