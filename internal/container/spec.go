// Package container renders how one process of a plan runs in a container
// of the release's image: the `docker run` or `podman run` argv, the
// systemd directives of the unit that starts and supervises it, the GPU
// numbering its deploy config must use, and the checks of the values a user
// gives it. It renders from values only (nothing here knows the planner or
// Terraform), so that the argv a test hands a real runtime is the one a
// unit would carry.
package container

// Runtime is the container runtime's client a unit runs.
type Runtime string

const (
	// Docker is docker's client, talking to dockerd: the container lives
	// under the daemon, not in the unit's cgroup.
	Docker Runtime = "docker"
	// Podman is podman, daemonless: its conmon stays in the unit's cgroup
	// and tells systemd the container's main PID.
	Podman Runtime = "podman"
)

// GPUMode is how a container asks for its GPUs.
type GPUMode string

const (
	// CDI asks for each GPU as the Container Device Interface device
	// nvidia.com/gpu=<host index>, one --device each (NVIDIA Container
	// Toolkit, "Support for Container Device Interface",
	// https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html).
	// Podman reads CDI specs; Docker does from 25 on, with CDI enabled.
	CDI GPUMode = "cdi"
	// NVIDIARuntime is Docker's --runtime nvidia with --gpus "device=N,M"
	// (NVIDIA Container Toolkit, "Specialized Configurations with Docker",
	// https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html).
	NVIDIARuntime GPUMode = "nvidia_runtime"
)

// PullPolicy is when the runtime pulls the image: the value of both
// runtimes' --pull (podman-run(1) 4.3, --pull=policy; docker run --help,
// --pull: "always", "missing", "never").
type PullPolicy string

const (
	// PullMissing pulls only an image the machine does not hold.
	PullMissing PullPolicy = "missing"
	// PullAlways pulls on every start, failing the start when it cannot.
	PullAlways PullPolicy = "always"
	// PullNever runs only an image the machine holds.
	PullNever PullPolicy = "never"
)

// Mount is a host path bind-mounted into the container.
type Mount struct {
	Source   string // absolute path on the host
	Target   string // absolute path in the container
	ReadOnly bool
}

// EnvVar is one variable the container's processes get, by value.
type EnvVar struct {
	Name, Value string
}

// Spec is one process's container: everything its run argv and its unit's
// directives are rendered from. Every container runs in the machine's
// network namespace (vllm-omni's stages find each other by address and
// port) and IPC namespace (stages on one host hand payloads through
// /dev/shm, as upstream's install guide runs the image with --ipc=host),
// under the runtime's init (vLLM's worker processes are reaped and signals
// passed on), and is removed when it stops: those are not fields, since a
// plan has no choice there.
type Spec struct {
	Runtime Runtime
	// RuntimePath is the runtime client's absolute path, the unit's
	// executable: /usr/bin/docker or /usr/bin/podman.
	RuntimePath string
	// Image is the image reference: [registry/]path[:tag][@digest].
	Image string
	Pull  PullPolicy
	// Name is the container's name (NameFor gives the one derived from
	// its unit).
	Name string
	// Unit is the systemd unit that runs the container, with its suffix
	// (omni-stage@0.service): podman's container ID file is named for it.
	Unit string
	// GPUs are the host's indices of the GPUs the container is given, and
	// GPUMode how it asks for them.
	GPUs    []int
	GPUMode GPUMode
	Mounts  []Mount
	// Env are the variables set by value, in order; PassEnv the variables
	// passed on by name from the runtime client's own environment, which
	// the unit's EnvironmentFile= gives it (secrets: their values never
	// reach an argv, a unit or Terraform's state).
	Env     []EnvVar
	PassEnv []string
	// NoFile is the open files limit, soft and hard; 0 leaves the
	// runtime's default.
	NoFile int
	// RDMA gives the container the machine's InfiniBand devices and lets
	// it lock memory without limit, as an RDMA transfer engine needs.
	RDMA bool
	// Memlock lets the container's processes lock and register memory
	// beyond RLIMIT_MEMLOCK, as a KV connector that registers GPU memory
	// with a NIC needs (NIXL does whatever it runs over): CAP_IPC_LOCK,
	// which the kernel's limit does not bind (setrlimit(2), RLIMIT_MEMLOCK:
	// it governs unprivileged processes only; ib_umem_get checks
	// capable(CAP_IPC_LOCK) before the limit), as upstream's Mooncake
	// guide runs the image (--cap-add=IPC_LOCK and no --ulimit,
	// docs/design/feature/omni_connectors/mooncake_transfer_engine_connector.md@d4a869fe:126-139).
	// Unlike a --ulimit it asks nothing of the runtime's own limits, and
	// it needs none of the InfiniBand devices, which a machine without
	// them cannot hand a container. RDMA implies it.
	Memlock bool
	// Options are a user's extra run options, words as they would follow
	// `run` on a command line, put after the planned ones and before the
	// image. Check refuses those that would undo what the plan sets.
	Options []string
	// StopTimeout is how long, in seconds, a stop waits for the container
	// to end after SIGTERM before killing it.
	StopTimeout int
	// Command is what the container runs: the image has no entrypoint, so
	// it is the whole command (the preflight, then vllm).
	Command []string
}
