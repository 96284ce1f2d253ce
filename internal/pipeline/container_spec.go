package pipeline

import (
	"path"

	"github.com/omnipd/terraform-provider-omni/internal/container"
)

// ContainerSpec runs each process of the plan in its own container of the
// release's image (the `container` block). Empty fields take the defaults
// of withDefaults.
type ContainerSpec struct {
	Image       string // image reference; "" means the release's official image
	Runtime     string // docker or podman; "" means docker
	RuntimePath string // the runtime client's path; "" means /usr/bin/<runtime>
	GPUs        string // cdi or nvidia_runtime; "" means cdi for podman, nvidia_runtime for docker
	Pull        string // missing, always or never; "" means missing
	// Mounts are the user's, beside the ones the plan makes (the deploy
	// config, the check script, the cache and a local model).
	Mounts []container.Mount
	// Options are extra words of the run command, before the image.
	Options []string
}

// Where vllm-omni's CUDA image keeps what a unit runs: vllm-omni's layer
// (docker/Dockerfile.cuda@d4a869fe) installs into its base's system Python,
// and the base (vLLM's docker/Dockerfile, `uv pip install --system`) puts
// the vllm script in /usr/local/bin. The image sets no USER: its processes
// run as root.
const (
	ImageVLLMPath   = "/usr/local/bin/vllm"
	ImagePythonPath = "/usr/bin/python3"
)

// Container defaults. Docker is the runtime of upstream's install guide
// (docs/getting_started/installation/gpu/cuda.inc.md@d4a869fe:100-106).
const (
	DefaultContainerRuntime = string(container.Docker)
	DefaultContainerPull    = string(container.PullMissing)
	// containerStopTimeout is how long a container is given to end after
	// SIGTERM: the host units' TimeoutStopSec= less the runtime's own work.
	containerStopTimeout = 110
)

// withDefaults fills in the defaults, the image the release's.
func (c ContainerSpec) withDefaults(release string) ContainerSpec {
	if c.Image == "" {
		c.Image = container.DefaultImage(release)
	}
	if c.Runtime == "" {
		c.Runtime = DefaultContainerRuntime
	}
	if c.RuntimePath == "" {
		c.RuntimePath = path.Join("/usr/bin", c.Runtime)
	}
	if c.GPUs == "" {
		c.GPUs = string(DefaultGPUMode(container.Runtime(c.Runtime)))
	}
	if c.Pull == "" {
		c.Pull = DefaultContainerPull
	}
	return c
}

// DefaultGPUMode is how a runtime's containers ask for GPUs unless told:
// podman through CDI, the one way it has (NVIDIA's cdi-support.html);
// docker through NVIDIA's runtime (docker-specialized.html), as upstream's
// guide runs the image, which needs no CDI spec on the machine.
func DefaultGPUMode(r container.Runtime) container.GPUMode {
	if r == container.Podman {
		return container.CDI
	}
	return container.NVIDIARuntime
}

// service is the ServiceSpec the plan runs: Service, told whether vllm
// runs in the image.
func (s Spec) service() ServiceSpec {
	svc := s.Service
	svc.inImage = s.Container != nil
	return svc
}

// secretNames are the variables passed on to every container by name from
// the unit's environment, which systemd.environment_file gives it: the
// Hugging Face token, under both names huggingface_hub reads
// (huggingface_hub/constants.py). A name the file holds that is not set
// passes nothing. Their values never reach an argv, a unit or the state.
var secretNames = []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}
