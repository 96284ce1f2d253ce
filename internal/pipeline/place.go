package pipeline

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// placement is what place decides: each stage's devices, by its key
// (plannedStage.key), the indices of its host's GPUs.
type placement map[string][]int

// place chooses every stage's devices, in stage order. Devices the user
// lists are kept as given. Prefill and decode get their own devices,
// lowest free index first (or the devices an earlier plan gave them on the
// same host, while those still fit); the other stages share the first
// device left after the PD pair, as the recipe puts talker and code2wav
// together on one GPU. Every device an earlier plan chose that still fits
// on its host is kept before anything is chosen afresh, so that a stage
// new to a host (moved there, or a host added) takes what is free rather
// than what a stage staying there holds; prev is that plan's, nil for
// none, and gpus bounds the indices it may keep. place reports nothing:
// the stages' sizes must be within bounds (checkWorldBounds), and
// checkPlacement judges what it chose.
func place(lay stageLayout, prev *Allocations, gpus *int) placement {
	stages := lay.stages
	chosen := make(placement, len(stages))
	used := map[string]map[int]bool{} // host -> devices taken by P and D
	take := func(into map[string]map[int]bool, host string, devs []int) {
		if into[host] == nil {
			into[host] = map[int]bool{}
		}
		for _, d := range devs {
			into[host][d] = true
		}
	}
	kept := func(s *plannedStage) ([]int, bool) { return previousDevices(prev, gpus, lay.head(), s) }
	pre, dec := lay.pdPair()
	pair := []*plannedStage{pre, dec}
	for _, s := range pair {
		if s.devicesGiven {
			chosen[s.key] = s.givenDevices
			take(used, s.host, s.givenDevices)
		}
	}
	for _, s := range pair {
		if devs, ok := kept(s); ok && !s.devicesGiven && !anyUsed(used[s.host], devs) {
			chosen[s.key] = devs
			take(used, s.host, devs)
		}
	}
	// The other stages keep theirs next: they share GPUs among themselves
	// but never the PD pair's, so a side new to the host must not take them.
	others := map[string]map[int]bool{} // host -> devices the other stages keep
	for _, s := range stages {
		if s.role != RoleStage || s.devicesGiven {
			continue
		}
		if devs, ok := kept(s); ok && !anyUsed(used[s.host], devs) {
			chosen[s.key] = devs
			take(others, s.host, devs)
		}
	}
	for _, s := range pair {
		if chosen[s.key] == nil {
			chosen[s.key] = lowestFree(used[s.host], others[s.host], s.par.world())
			take(used, s.host, chosen[s.key])
		}
	}
	for _, s := range stages {
		switch {
		case s.role != RoleStage, chosen[s.key] != nil:
		case s.devicesGiven:
			chosen[s.key] = s.givenDevices
		default:
			// The other stages share GPUs among themselves, as the recipe
			// runs talker and code2wav on one, but never the PD pair's: a
			// stage of several devices (replicas, tensor parallel) takes
			// the lowest ones prefill and decode leave free.
			chosen[s.key] = lowestFree(used[s.host], nil, s.par.world())
		}
	}
	return chosen
}

// checkPlacement judges the devices place chose for the layout's stages:
// a list the user gave that does not match the stage's parallel sizes,
// prefill and decode on the same GPUs of one host, a host with fewer GPUs
// (gpus, nil for no limit) than the layout needs, and GPUs whose stages
// ask for more than their memory.
func checkPlacement(lay stageLayout, devices placement, gpus *int, ds *Diagnostics) {
	pre, dec := lay.pdPair()
	for _, s := range []*plannedStage{pre, dec} {
		if s.devicesGiven {
			checkWorld(s, ds)
		}
	}
	if pre.host == dec.host {
		if shared := intersect(devices[pre.key], devices[dec.key]); len(shared) > 0 {
			ds.errorf(diagcode.PDDevicesOverlap, dec.path.Attr("devices"), "prefill and decode share GPUs",
				"device(s) %s are in both prefill.devices and decode.devices; give each side its own GPUs (they run as separate engines).",
				stageconfig.FormatDevices(shared))
		}
	}
	for _, s := range lay.stages {
		if s.role == RoleStage && s.devicesGiven {
			checkWorld(s, ds)
		}
	}
	if gpus != nil {
		checkGPULimit(lay, devices, *gpus, ds)
	}
	checkGPUMemory(lay.stages, devices, ds)
}

// maxWorldSize bounds the devices one stage may span on a host. Placement
// builds a list of that many devices, so an absurd tensor_parallel_size
// (from an attribute or the base config) must stop here, not exhaust memory.
const maxWorldSize = 1024

// checkWorldBounds reports stages whose parallel sizes ask for more devices
// than any host has, blaming the attribute the size came from (basePath
// for the base config).
func checkWorldBounds(lay stageLayout, basePath Path, ds *Diagnostics) bool {
	ok := true
	for _, s := range lay.stages {
		if s.par.world() >= 1 && s.par.world() <= maxWorldSize {
			continue
		}
		path := worldBlame(s, basePath)
		if s.par.world() < 1 {
			// Zero or negative sizes come only from a base config (the
			// attributes are checked to be at least 1).
			ds.errorf(diagcode.WorldSizeRange, path, "a stage's parallel sizes are not positive",
				"%s has %s; set each of them to 1 or more.", s.describe(), s.par)
		} else {
			ds.errorf(diagcode.WorldSizeRange, path, "a stage asks for more GPUs than a host has",
				"%s needs %s (%s); use at most %d.", s.describe(), s.par.needs(), s.par, maxWorldSize)
		}
		ok = false
	}
	return ok
}

// worldBlame is the attribute a stage's out-of-range device count came
// from: a stage override as a whole; on the PD pair a tensor_parallel_size
// beyond any host by itself, else engine_args when it sets the other sizes,
// else tensor_parallel_size when set; otherwise the base config.
func worldBlame(s *plannedStage, basePath Path) Path {
	if s.override != nil {
		return s.path
	}
	if s.pd == nil {
		return basePath
	}
	tp := s.pd.TensorParallelSize
	switch {
	case tp != nil && *tp > maxWorldSize:
		return s.path.Attr("tensor_parallel_size")
	case s.pd.EngineArgs["pipeline_parallel_size"] != nil || s.pd.EngineArgs["data_parallel_size"] != nil:
		return s.path.Attr("engine_args")
	case tp != nil:
		return s.path.Attr("tensor_parallel_size")
	}
	return basePath
}

func checkWorld(s *plannedStage, ds *Diagnostics) {
	if len(s.givenDevices) != s.par.world() {
		ds.errorf(diagcode.DevicesWorldSize, s.path.Attr("devices"), "the device count does not match the parallelism",
			"%s lists %d device(s) but %s needs %s; list %s or change the parallel sizes.",
			s.describe(), len(s.givenDevices), s.par, s.par.needs(), s.par.needs())
	}
}

// previousDevices returns the devices an earlier plan prev chose for the
// stage on the host it runs on now (head is the new plan's head), when
// they still fit its size and the host's GPUs.
func previousDevices(prev *Allocations, gpus *int, head string, s *plannedStage) ([]int, bool) {
	if prev == nil {
		return nil, false
	}
	devs, ok := prev.Devices[HostKey{prev.HostOf(s.host, head), s.deviceKey}]
	if !ok || len(devs) != s.par.world() {
		return nil, false
	}
	seen := map[int]bool{}
	for _, d := range devs {
		if d < 0 || seen[d] || (gpus != nil && d >= *gpus) {
			return nil, false
		}
		seen[d] = true
	}
	return append([]int(nil), devs...), true
}

func anyUsed(used map[int]bool, devs []int) bool {
	for _, d := range devs {
		if used[d] {
			return true
		}
	}
	return false
}

// lowestFree returns the n lowest device indices in neither used nor
// avoid.
func lowestFree(used, avoid map[int]bool, n int) []int {
	out := make([]int, 0, n)
	for d := 0; len(out) < n; d++ {
		if !used[d] && !avoid[d] {
			out = append(out, d)
		}
	}
	return out
}

// checkGPULimit reports a layout that needs more GPUs than a host has
// (limit), saying which stage sits where so the user sees what to shrink.
func checkGPULimit(lay stageLayout, devices placement, limit int, ds *Diagnostics) {
	for _, host := range lay.hosts {
		need := 0
		var where []string
		var blame Path
		var listed *plannedStage // the stage whose own devices ask for the highest GPU
		for _, s := range lay.stages {
			if s.host != host {
				continue
			}
			where = append(where, fmt.Sprintf("%s on %s", s.describe(), stageconfig.FormatDevices(devices[s.key])))
			for _, d := range devices[s.key] {
				if d+1 > need {
					need = d + 1
					blame, listed = AttrPath("gpus"), nil
					if s.devicesGiven {
						blame, listed = s.path.Attr("devices"), s
					}
				}
			}
		}
		if need > limit && listed != nil {
			// The cause is an index that does not exist, not the count.
			ds.errorf(diagcode.GPUsExceeded, blame, "a listed device does not exist on the host",
				"%s is placed on GPU %d%s, but gpus = %d gives each host GPUs 0-%d: list devices that exist there, or raise gpus if the host has more.",
				listed.describe(), need-1, onHost(host), limit, limit-1)
			continue
		}
		if need > limit {
			ds.errorf(diagcode.GPUsExceeded, blame, "the layout needs more GPUs than the host has",
				"the layout needs devices 0-%d (%d GPUs)%s but gpus = %d: %s. Raise gpus, lower tensor_parallel_size, or list devices that exist.",
				need-1, need, onHost(host), limit, strings.Join(where, "; "))
		}
	}
}

// checkGPUMemory adds up the memory share of the stages on each device.
func checkGPUMemory(stages []*plannedStage, devices placement, ds *Diagnostics) {
	type share struct {
		total  float64
		stages []string
		last   *plannedStage
	}
	byDevice := map[string]*share{}
	var order []string
	for _, s := range stages {
		for _, d := range devices[s.key] {
			key := fmt.Sprintf("%s/%d", s.host, d)
			sh := byDevice[key]
			if sh == nil {
				sh = &share{}
				byDevice[key] = sh
				order = append(order, key)
			}
			sh.total += s.memory
			sh.stages = append(sh.stages, fmt.Sprintf("%s %.2f", s.describe(), s.memory))
			sh.last = s
		}
	}
	for _, key := range order {
		sh := byDevice[key]
		reportShare(ds, sh.last.path.Attr("gpu_memory_utilization"), key, sh.total, sh.stages)
	}
}
