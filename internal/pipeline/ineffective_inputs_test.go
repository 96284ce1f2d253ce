package pipeline

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// warningKinds sorts every warning the catalogue has by what it says of
// the input it names: ineffective (the input is dropped, replaced or does
// nothing), or not, with why. A new warning fails
// TestIneffectiveInputs_ChangeNothing until it is sorted here.
var warningKinds = map[diagcode.Code]string{
	diagcode.HeadWaitUnused:             ineffective,
	diagcode.FormatConversionDroppedKey: ineffective,
	diagcode.CrossHostConnectorReplaced: ineffective,
	// Moved or renamed, the value takes effect under the key the release
	// reads; where the stage sets that key too, the ignored one is dropped
	// (ineffectiveCases has that case).
	diagcode.IgnoredKeyTranslated:   ineffective,
	diagcode.YAMLInterpolationKept:  "kept as written, and vllm-omni resolves it",
	diagcode.YAMLAnchorsWrittenOut:  "written out, the same data",
	diagcode.PlatformDevicesKept:    "kept: the platform's devices place both halves",
	diagcode.GPUMemoryTight:         "a risk of the values given, all of which take effect",
	diagcode.PipelineUserRegistered: "written as given; the machine must register it",
	diagcode.ReleaseRowUnread:       "about the release table, not an input",
	diagcode.StageNeverReached:      "the stage is planned as given; no request reaches it",
	diagcode.SecretByName:           "written as given; it may be a secret, which belongs in environment_file",
	diagcode.PortEphemeral:          "a risk of the port given, which takes effect",
	diagcode.PortWellKnown:          "a risk of the port given, which takes effect",
	diagcode.ContainerImageRelease:  "the image given runs, and its preflight may fail",
	diagcode.ContainerImageUnpinned: "the image given runs, whatever the registry holds",
	diagcode.ContainerSettingUnused: ineffective,
}

const ineffective = ""

// ineffectiveCase is a plan with an input the plan warns has no effect, and
// the same plan without it (or, where the input is replaced, with another
// value in its place).
type ineffectiveCase struct {
	name          string
	code          diagcode.Code
	with, without func(t *testing.T) Spec
}

func ineffectiveCases() []ineffectiveCase {
	var cases []ineffectiveCase
	// head_wait_seconds where no process waits for the head: 0.22.0 and
	// 0.23.0rc1 run a one-host plan in one process.
	for _, v := range []string{"0.22.0", "0.23.0rc1", "0.22", "0.23"} {
		for _, wait := range []int{10, 120, DefaultHeadWaitSeconds, 86400} {
			cases = append(cases, ineffectiveCase{"head_wait_seconds " + strconv.Itoa(wait) + " on " + v, diagcode.HeadWaitUnused,
				func(*testing.T) Spec {
					return Spec{Model: seedModel, VLLMOmniVersion: v, Service: ServiceSpec{HeadWaitSeconds: ptr(wait)}}
				},
				func(*testing.T) Spec { return Spec{Model: seedModel, VLLMOmniVersion: v} }})
		}
	}
	// A stages base's platforms section, which stage_args has no place for.
	cases = append(cases, ineffectiveCase{"platforms of a stages base written as stage_args", diagcode.FormatConversionDroppedKey,
		func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: readLocal(t, stagesQwen3), SplitStage: ptr(0), Format: "stage_args"}
		},
		func(t *testing.T) Spec {
			base := readLocal(t, stagesQwen3)
			return Spec{Model: seedModel, BaseConfig: base[:strings.Index(base, "\nplatforms:")+1], SplitStage: ptr(0), Format: "stage_args"}
		}})
	// The connector a base names on an edge that now crosses hosts: which
	// one it names changes nothing, since it is replaced (both are defined
	// in both bases).
	spare := "connectors:\n  spare_connector:\n    name: SharedMemoryConnector\n"
	talkerInput := "    input_connectors:\n      from_stage_0: connector_of_shared_memory\n"
	for _, hosts := range [][3]string{{"10.0.0.1", "10.0.0.1", "10.0.0.2"}, {"10.0.0.1", "10.0.0.2", "10.0.0.3"}} {
		spec := func(t *testing.T, connector string) Spec {
			base := readLocal(t, stagesQwen3)
			if !strings.Contains(base, talkerInput) || !strings.Contains(base, "\nconnectors:\n") {
				t.Fatal("the fixture has no talker input connector")
			}
			base = strings.Replace(base, "\nconnectors:\n", "\n"+spare, 1)
			base = strings.Replace(base, talkerInput, strings.Replace(talkerInput, "connector_of_shared_memory", connector, 1), 1)
			return Spec{Model: seedModel, BaseConfig: base, SplitStage: ptr(0),
				Prefill: RoleSpec{Host: hosts[0]}, Decode: RoleSpec{Host: hosts[1]},
				StageOverrides: map[string]StageOverride{"stage_1": {Host: hosts[2]}, "stage_2": {Host: hosts[2]}}}
		}
		cases = append(cases, ineffectiveCase{"the talker's input connector across hosts " + strings.Join(hosts[:], ","), diagcode.CrossHostConnectorReplaced,
			func(t *testing.T) Spec { return spec(t, "connector_of_shared_memory") },
			func(t *testing.T) Spec { return spec(t, "spare_connector") }})
	}
	// systemd.user with a container launch, whose units run the runtime's
	// client as root.
	cases = append(cases, ineffectiveCase{"systemd.user with a container", diagcode.ContainerSettingUnused,
		func(*testing.T) Spec {
			return Spec{Model: seedModel, Service: ServiceSpec{User: "omni"}, Container: &ContainerSpec{}}
		},
		func(*testing.T) Spec { return Spec{Model: seedModel, Container: &ContainerSpec{}} }})
	// A stage_args key the release never reads, where the stage also sets
	// the key it does read.
	talker := "  - stage_id: 1\n"
	cases = append(cases, ineffectiveCase{"runtime.max_batch_size beside engine_args.max_num_seqs", diagcode.IgnoredKeyTranslated,
		func(t *testing.T) Spec {
			base := readLocal(t, legacyQwen3)
			i := strings.Index(base, talker)
			return Spec{Model: seedModel, BaseConfig: base[:i] + strings.Replace(base[i:], "    engine_args:\n", "    engine_args:\n      max_num_seqs: 4\n", 1)}
		},
		func(t *testing.T) Spec {
			base := readLocal(t, legacyQwen3)
			i := strings.Index(base, talker)
			rest := strings.Replace(base[i:], "    engine_args:\n", "    engine_args:\n      max_num_seqs: 4\n", 1)
			return Spec{Model: seedModel, BaseConfig: base[:i] + strings.Replace(rest, "      max_batch_size: 1\n", "", 1)}
		}})
	return cases
}

// An input the plan calls ineffective changes nothing a machine gets: the
// plan with it and the plan without it have the same id and the same
// outputs, so it never replaces a machine through replace_triggered_by.
// Every warning is sorted as ineffective or not, and each ineffective one
// has cases.
func TestIneffectiveInputs_ChangeNothing(t *testing.T) {
	covered := map[diagcode.Code]bool{}
	for _, tc := range ineffectiveCases() {
		t.Run(tc.name, func(t *testing.T) {
			with, ds := Plan(tc.with(t))
			if with == nil {
				t.Fatalf("with the input: %s", describeDiags(ds))
			}
			if !hasCodeAny(ds.Warnings(), tc.code.String()) {
				t.Fatalf("with the input, no %s warning: %v", tc.code, ds.Codes())
			}
			without, ds := Plan(tc.without(t))
			if without == nil {
				t.Fatalf("without the input: %s", describeDiags(ds))
			}
			covered[tc.code] = true
			if with.ID != without.ID {
				t.Errorf("id changes with an input the plan calls ineffective (%s)", tc.code)
			}
			if d := firstDifference(with, without); d != "" {
				t.Errorf("the outputs change with an input the plan calls ineffective (%s): %s", tc.code, d)
			}
		})
	}
	for _, area := range diagcode.Areas() {
		for _, e := range area.Entries {
			if e.Severity&diagcode.Warning == 0 {
				continue
			}
			kind, ok := warningKinds[e.Code]
			switch {
			case !ok:
				t.Errorf("warning %s is not sorted in warningKinds: does the input it names take effect?", e.Code)
			case kind == ineffective && !covered[e.Code]:
				t.Errorf("warning %s calls an input ineffective, but no case of ineffectiveCases shows it changes nothing", e.Code)
			}
		}
	}
}

// firstDifference names the first output of two results that differs, with
// the first line of the texts that differ.
func firstDifference(a, b *Result) string {
	va, vb := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := 0; i < va.NumField(); i++ {
		f := va.Type().Field(i)
		if !f.IsExported() || f.Name == "ID" || reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			continue
		}
		if sa, ok := va.Field(i).Interface().(string); ok {
			sb, _ := vb.Field(i).Interface().(string)
			return f.Name + ": " + firstLineDiff(sa, sb)
		}
		if f.Name == "Launches" {
			for j, l := range a.Launches {
				if j >= len(b.Launches) {
					return "Launches: one more"
				}
				for k, p := range l.Processes {
					if k < len(b.Launches[j].Processes) && !reflect.DeepEqual(p.DropIn, b.Launches[j].Processes[k].DropIn) {
						return "Launches[" + strconv.Itoa(j) + "].Processes[" + strconv.Itoa(k) + "].DropIn: " + firstLineDiff(p.DropIn.Content, b.Launches[j].Processes[k].DropIn.Content)
					}
				}
			}
		}
		return f.Name
	}
	return ""
}

func firstLineDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return "line " + strconv.Itoa(i+1) + ": " + truncate(la[i]) + " | " + truncate(lb[i])
		}
	}
	return "one is longer"
}

func truncate(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}
