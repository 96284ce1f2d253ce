package pipeline

import (
	"slices"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/container"
)

// containerLaunch is how every process of a container launch runs: the
// block with its defaults, the mounts, and what the connector needs of
// the machine.
type containerLaunch struct {
	ContainerSpec // with defaults
	mounts        []container.Mount
	// memlock: the connector registers GPU memory with a NIC, so the
	// container may lock memory without limit; rdma: it runs over RDMA
	// (connector.protocol), so the container gets the InfiniBand devices
	// too.
	memlock, rdma bool
}

// containerLaunchOf is the container launch of s for release, or nil when
// s runs a host install.
func containerLaunchOf(s Spec, release string, memlock, rdma bool, reg *Registration) *containerLaunch {
	if s.Container == nil {
		return nil
	}
	mounts := containerMounts(s)
	// The launcher imports the registration in the container, where the
	// release's vllm-omni resolves the config's pipeline: read-only at its
	// own path, as the check script beside it.
	if reg != nil {
		mounts = append(mounts, container.Mount{Source: reg.Path, Target: reg.Path, ReadOnly: true})
	}
	return &containerLaunch{ContainerSpec: s.Container.withDefaults(release), mounts: mounts, memlock: memlock, rdma: rdma}
}

// specOf is the container proc runs in: its unit's, named for it, with
// exactly the process's GPUs (host indices: the deploy config holds the
// container's own, localizeDevices), the machine's network and IPC, the
// mounts, the cache as HF_HOME and HOME, the process's environment by
// value and the secrets by name, and the preflight, then vllm, as its
// command. Its open files are the runtime's default for a container
// (rootful podman's 1048576, dockerd's own limit), which the machine's
// runtime configuration sets and an option (--ulimit nofile=N:N) may
// change: a limit in the argv above the machine's hard limit would fail
// every start where the runtime may not raise it.
func (cl *containerLaunch) specOf(proc Process, cache string) container.Spec {
	return container.Spec{
		Runtime: container.Runtime(cl.Runtime), RuntimePath: cl.RuntimePath, Image: cl.Image, Pull: container.PullPolicy(cl.Pull),
		Name: container.NameFor(proc.UnitName), Unit: proc.UnitName,
		GPUs: slices.Compact(slices.Sorted(slices.Values(proc.Devices))), GPUMode: container.GPUMode(cl.GPUs),
		Mounts: cl.mounts, Env: plannedEnv(cache, proc.Env), PassEnv: secretNames,
		RDMA: cl.rdma, Memlock: cl.memlock, Options: cl.Options, StopTimeout: containerStopTimeout, Command: proc.exec,
	}
}

// isExec reports whether a directive runs a command: with a container
// each names its container, so it goes in the unit that runs it, the
// drop-in of a stage.
func isExec(key string) bool { return strings.HasPrefix(key, "Exec") }
