package container

import (
	"fmt"
	"slices"
)

// LocalIndex maps each of a container's host GPU indices to the index its
// processes see. A container given host GPUs 2 and 3 holds only
// /dev/nvidia2 and /dev/nvidia3, and CUDA and nvidia-smi in it number them
// from 0 (NVIDIA: "From inside a container, you can expect the GPUs to
// always start at 0", https://github.com/NVIDIA/nvidia-docker/issues/907),
// in the order the host enumerates them, which is ascending index where
// CUDA enumerates in PCI bus order as nvidia-smi does
// (CUDA_DEVICE_ORDER=PCI_BUS_ID). So the device request carries host
// indices and everything inside the container the local ones: a stage's
// devices in the deploy config become local, since vllm-omni sets its
// CUDA_VISIBLE_DEVICES from them and "2,3" would name GPUs the container
// does not have (vllm_omni/entrypoints/stage_utils.py@d4a869fe:14-39).
func LocalIndex(gpus []int) map[int]int {
	sorted := slices.Compact(slices.Sorted(slices.Values(gpus)))
	local := make(map[int]int, len(sorted))
	for i, g := range sorted {
		local[g] = i
	}
	return local
}

// LocalDevices is a stage's devices as its container sees them, in the
// stage's order: each host index replaced by LocalIndex of the container's
// GPUs. A host index the container is not given is an error.
func LocalDevices(container, stage []int) ([]int, error) {
	index := LocalIndex(container)
	local := make([]int, len(stage))
	for i, g := range stage {
		l, ok := index[g]
		if !ok {
			return nil, fmt.Errorf("GPU %d is not among the container's GPUs %v", g, container)
		}
		local[i] = l
	}
	return local, nil
}
