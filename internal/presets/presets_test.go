package presets

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

func TestNames(t *testing.T) {
	want := []string{Qwen25Omni, Qwen3OmniMoe, Qwen3OmniMoeThinkerOnly}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v (sorted, one per embedded file)", got, want)
	}
	for _, n := range want {
		if !Known(n) {
			t.Errorf("Known(%q) = false", n)
		}
	}
	for _, n := range []string{"", "qwen3_omni_moe.yaml", "Qwen3_Omni_Moe", "../presets"} {
		if Known(n) {
			t.Errorf("Known(%q) = true", n)
		}
	}
}

// TestPresetsAreSoundBases: every preset is a stage_args config with a
// thinker at stage 0 feeding a chain of stages, the last one the pipeline's
// final output, and no PD pair yet (the planner makes it).
func TestPresetsAreSoundBases(t *testing.T) {
	chains := map[string]struct {
		stages []string
		output string
	}{
		Qwen3OmniMoe:            {[]string{"thinker", "talker", "code2wav"}, "audio"},
		Qwen25Omni:              {[]string{"thinker", "talker", "code2wav"}, "audio"},
		Qwen3OmniMoeThinkerOnly: {[]string{"thinker"}, "text"},
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			want, ok := chains[name]
			if !ok {
				t.Fatalf("no expected chain for preset %q: add it here", name)
			}
			doc, err := Shared(name)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Dialect != stageconfig.StageArgs {
				t.Errorf("dialect %q", doc.Dialect)
			}
			stages := doc.Stages()
			if len(stages) != len(want.stages) {
				t.Fatalf("%d stages, want %d", len(stages), len(want.stages))
			}
			for i, wantStage := range want.stages {
				s := stages[i]
				if id, ok := s.ID(); !ok || id != i {
					t.Errorf("stage %d has id %d", i, id)
				}
				if got := s.ModelStage(); got != wantStage {
					t.Errorf("stage %d model_stage %q, want %q", i, got, wantStage)
				}
				ins, _, err := s.Inputs()
				if err != nil || (i == 0 && len(ins) != 0) || (i > 0 && (len(ins) != 1 || ins[0] != i-1)) {
					t.Errorf("stage %d inputs %v, %v", i, ins, err)
				}
				for _, k := range []string{"is_prefill_only", "is_decode_only"} {
					if s.Sets(k) {
						t.Errorf("stage %d already has %s", i, k)
					}
				}
			}
			last := stages[len(stages)-1]
			if !last.Flag("final_output") {
				t.Errorf("the last stage is not a final output")
			}
			if got, _ := last.String("final_output_type"); got != want.output {
				t.Errorf("the last stage's final_output_type is %q, want %q", got, want.output)
			}
			src, err := Source(name)
			if err != nil || len(src) == 0 {
				t.Errorf("Source: %v", err)
			}
		})
	}
	if _, err := Shared("nope"); err == nil {
		t.Error("Shared of an unknown preset succeeded")
	}
	if _, err := Source("nope"); err == nil {
		t.Error("Source of an unknown preset succeeded")
	}
}

// TestSharedParsesOnce: callers that ask at once all get the one parsed
// document.
func TestSharedParsesOnce(t *testing.T) {
	first, err := Shared(Qwen3OmniMoe)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d, err := Shared(Qwen3OmniMoe); err != nil || d != first {
				t.Errorf("Shared = %p, %v; want the one document %p", d, err, first)
			}
		}()
	}
	wg.Wait()
}

func TestArchitecture(t *testing.T) {
	for name, want := range map[string]string{
		Qwen3OmniMoe:            "Qwen3OmniMoeForConditionalGeneration",
		Qwen3OmniMoeThinkerOnly: "Qwen3OmniMoeForConditionalGeneration",
		Qwen25Omni:              "Qwen2_5OmniForConditionalGeneration",
		"missing":               "",
	} {
		if got := Architecture(name); got != want {
			t.Errorf("Architecture(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestHubModel(t *testing.T) {
	for model, want := range map[string]bool{
		"Qwen/Qwen3-Omni-30B-A3B-Instruct": true,
		"Qwen/Qwen2.5-Omni-7B":             true,
		"/models/Qwen3-Omni":               false,
		"./Qwen/Qwen3-Omni":                false,
		"Qwen3-Omni":                       false,
		"a/b/c":                            false,
		"/":                                false,
	} {
		if got := HubModel(model); got != want {
			t.Errorf("HubModel(%q) = %t, want %t", model, got, want)
		}
	}
}

// The thinker-only preset is qwen3_omni_moe's thinker, byte for byte:
// the same engine args and sampling, and the same final text output, since
// vllm-omni's thinker-only pipeline configures stage 0 as the full one does
// (qwen3_omni/pipeline.py@d4a869fe).
func TestThinkerOnlyIsTheThinker(t *testing.T) {
	full, err := Source(Qwen3OmniMoe)
	if err != nil {
		t.Fatal(err)
	}
	thinker, err := Source(Qwen3OmniMoeThinkerOnly)
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := strings.CutPrefix(string(full), string(thinker))
	if !ok || !strings.HasPrefix(rest, "  - stage_id: 1\n") {
		t.Errorf("%s.yaml is not the first stage of %s.yaml", Qwen3OmniMoeThinkerOnly, Qwen3OmniMoe)
	}
}
