package presets

import (
	"slices"
	"testing"
)

func TestForModel(t *testing.T) {
	const none = ""
	tests := []struct {
		model, preset, family string
	}{
		// The published models, by id and regardless of case.
		{"Qwen/Qwen3-Omni-30B-A3B-Instruct", Qwen3OmniMoe, "Qwen3-Omni"},
		{"Qwen/Qwen3-Omni-30B-A3B-Thinking", Qwen3OmniMoeThinkerOnly, "Qwen3-Omni"},
		{"Qwen/Qwen3-Omni-30B-A3B-Captioner", Qwen3OmniMoeThinkerOnly, "Qwen3-Omni"},
		{"qwen/qwen3-omni-30b-a3b-captioner", Qwen3OmniMoeThinkerOnly, "Qwen3-Omni"},
		{"Qwen/Qwen2.5-Omni-7B", Qwen25Omni, "Qwen2.5-Omni"},
		{"Qwen/Qwen2.5-Omni-3B", Qwen25Omni, "Qwen2.5-Omni"},
		// An absolute local path, by its last element.
		{"/models/Qwen3-Omni-30B-A3B-Thinking", Qwen3OmniMoeThinkerOnly, "Qwen3-Omni"},
		{"/srv/hf/Qwen/Qwen3-Omni-30B-A3B-Captioner", Qwen3OmniMoeThinkerOnly, "Qwen3-Omni"},
		{"/models/Qwen3-Omni-30B-A3B-Instruct/", Qwen3OmniMoe, "Qwen3-Omni"},
		{"/models/qwen2.5-omni-7b", Qwen25Omni, "Qwen2.5-Omni"},
		// Ids of a family that no entry knows exactly.
		{"Qwen/Qwen3-Omni", none, "Qwen3-Omni"},
		{"Qwen/Qwen3-Omni-30B-A3B", none, "Qwen3-Omni"},
		{"Qwen/Qwen3-Omni-30B-A3B-Instruct-FP8", none, "Qwen3-Omni"},
		{"acme/Qwen3-Omni-30B-A3B-Instruct", none, "Qwen3-Omni"},
		{"cpatonn/Qwen3-Omni-30B-A3B-Instruct-AWQ-4bit", none, "Qwen3-Omni"},
		{"/models/qwen3_omni_moe", none, "Qwen3-Omni"},
		{"/models/Qwen3-Omni-30B-A3B-Thinking/v2", none, "Qwen3-Omni"},
		{"./Qwen3-Omni-30B-A3B-Thinking", none, "Qwen3-Omni"},
		{"Qwen3-Omni-30B-A3B-Thinking", none, "Qwen3-Omni"},
		{"/models/Qwen3-Omni-30B-A3B-Thinking.tar", none, "Qwen3-Omni"},
		{"/data/qwen2_5_omni-awq", none, "Qwen2.5-Omni"},
		{"Qwen/Qwen2.5-Omni-7B-GPTQ-Int4", none, "Qwen2.5-Omni"},
		// Ids of no family.
		{"Qwen/Qwen3-8B", none, none},
		{"Qwen/Qwen2.5-7B-Instruct", none, none},
		{"", none, none},
	}
	for _, tc := range tests {
		m := ForModel(tc.model)
		got, ok := m.Preset()
		if got != tc.preset || ok != (tc.preset != none) {
			t.Errorf("ForModel(%q).Preset() = %q, %t; want %q", tc.model, got, ok, tc.preset)
		}
		family := none
		if m.Family != nil {
			family = m.Family.Name
		}
		if family != tc.family {
			t.Errorf("ForModel(%q).Family = %q, want %q", tc.model, family, tc.family)
		}
	}
}

// Every published model names an embedded preset of its own family, is
// found by its id and by a local path to it, and says where its pipeline is
// stated; every preset belongs to one family and serves a published model,
// so the docs' table has a row for each.
func TestVariantsAndFamilies(t *testing.T) {
	served := map[string]bool{}
	for _, v := range Variants {
		if !Known(v.Preset) {
			t.Errorf("%s: preset %q is not embedded", v.ID, v.Preset)
		}
		if !HubModel(v.ID) || v.Source == "" {
			t.Errorf("%s: want a Hugging Face id and a source, got source %q", v.ID, v.Source)
		}
		for _, model := range []string{v.ID, "/models/" + v.Name()} {
			m := ForModel(model)
			if m.Variant == nil || m.Variant.ID != v.ID {
				t.Errorf("ForModel(%q) does not find %s", model, v.ID)
			}
			if m.Family == nil || !slices.Contains(m.Family.Presets, v.Preset) {
				t.Errorf("ForModel(%q): %s's preset %q is not among its family's", model, v.ID, v.Preset)
			}
		}
		served[v.Preset] = true
	}
	for _, name := range Names() {
		var in []string
		for _, f := range Families {
			if slices.Contains(f.Presets, name) {
				in = append(in, f.Name)
			}
		}
		if len(in) != 1 {
			t.Errorf("preset %q is in families %v, want one", name, in)
		}
		if !served[name] {
			t.Errorf("preset %q serves no published model", name)
		}
	}
}

// Match.Architecture judges a family's id by its first preset, which is
// right only while all of a family's presets load one model class.
func TestFamiliesShareAnArchitecture(t *testing.T) {
	for _, f := range Families {
		for _, name := range f.Presets {
			if got, want := Architecture(name), Architecture(f.Presets[0]); got == "" || got != want {
				t.Errorf("%s: preset %q loads %q, the family's first %q", f.Name, name, got, want)
			}
		}
	}
	for model, want := range map[string]string{
		"Qwen/Qwen3-Omni-30B-A3B-Thinking": "Qwen3OmniMoeForConditionalGeneration",
		"Qwen/Qwen3-Omni":                  "Qwen3OmniMoeForConditionalGeneration",
		"acme/Qwen2.5-Omni-7B-AWQ":         "Qwen2_5OmniForConditionalGeneration",
		"Qwen/Qwen3-8B":                    "",
	} {
		if got := ForModel(model).Architecture(); got != want {
			t.Errorf("ForModel(%q).Architecture() = %q, want %q", model, got, want)
		}
	}
}

func TestPipeline(t *testing.T) {
	for name, want := range map[string]string{
		Qwen3OmniMoe:            "thinker, talker, code2wav; text and audio output",
		Qwen3OmniMoeThinkerOnly: "thinker only; text output",
		Qwen25Omni:              "thinker, talker, code2wav; text and audio output",
		"missing":               "",
	} {
		if got := Pipeline(name); got != want {
			t.Errorf("Pipeline(%q) = %q, want %q", name, got, want)
		}
	}
}
