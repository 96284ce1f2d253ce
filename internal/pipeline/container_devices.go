package pipeline

import (
	"fmt"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// localizeDevices writes each stage's devices into the planned config as
// its container numbers them (container.LocalDevices): a container given
// host GPUs 2 and 3 sees them as 0 and 1, and vllm-omni sets the stage's
// CUDA_VISIBLE_DEVICES from the config's devices. A stage's container
// holds its own GPUs when each stage runs as its own process, and every
// stage's of its host when one process runs them all. The plan's other
// outputs keep the host's indices: the devices are the GPUs a container
// asks for. It runs after the planned config is checked, whose checks
// (two stages on one GPU, the memory a GPU's stages share) read host
// indices.
func localizeDevices(doc *stageconfig.Document, planned stageLayout, stageBased bool) error {
	byHost := map[string][]int{}
	for _, s := range planned.stages {
		byHost[s.host] = append(byHost[s.host], s.devices...)
	}
	for _, st := range doc.Stages() {
		id, ok := st.ID()
		s := planned.stageByID(id)
		if !ok || s == nil || len(s.devices) == 0 {
			continue
		}
		gpus := s.devices
		if !stageBased {
			gpus = byHost[s.host]
		}
		local, err := container.LocalDevices(gpus, s.devices)
		if err != nil {
			return fmt.Errorf("%s: %w", st.Describe(), err)
		}
		st.SetDevices(local)
	}
	return nil
}
