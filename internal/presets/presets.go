// Package presets holds the base stage configs the provider ships, and
// picks one from a model id when the user names neither a preset nor a base
// config (models.go).
package presets

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

//go:embed *.yaml
var files embed.FS

// Preset names, one per embedded file.
const (
	Qwen3OmniMoe = "qwen3_omni_moe"
	// Qwen3OmniMoeThinkerOnly is the Qwen3-Omni pipeline without audio
	// output: the thinker alone, as vllm-omni's qwen3_omni_moe_thinker_only
	// (vllm_omni/model_executor/models/qwen3_omni/pipeline.py@d4a869fe
	// QWEN3_OMNI_THINKER_ONLY_PIPELINE: stage 0, final output text,
	// engine_output_type latent, no processors), with the engine args and
	// sampling of qwen3_omni_moe's thinker.
	Qwen3OmniMoeThinkerOnly = "qwen3_omni_moe_thinker_only"
	Qwen25Omni              = "qwen2_5_omni"
)

// Names lists the embedded presets in sorted order.
func Names() []string {
	entries, _ := files.ReadDir(".")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), path.Ext(e.Name())))
	}
	sort.Strings(names)
	return names
}

type parsed struct {
	doc *stageconfig.Document
	err error
}

// cache holds each preset parsed once. Shared hands out the cached
// document, which nobody may edit (a caller that edits clones it), so plans
// can run concurrently.
var cache sync.Map // name -> func() parsed

// Shared returns the preset's parsed document itself, shared by every caller
// and every concurrent plan: it must never be edited. Readers that only
// look (the planner reads its base config and edits a clone) save a copy of
// the whole tree per plan; TestShared_NeverEdited guards the rule.
func Shared(name string) (*stageconfig.Document, error) {
	if !Known(name) {
		return nil, fmt.Errorf("unknown preset %q: use one of %s", name, strings.Join(Names(), ", "))
	}
	once, _ := cache.LoadOrStore(name, sync.OnceValue(func() parsed {
		src, err := files.ReadFile(name + ".yaml")
		if err != nil {
			return parsed{err: err}
		}
		doc, err := stageconfig.Parse(src)
		return parsed{doc: doc, err: err}
	}))
	load, _ := once.(func() parsed)
	p := load()
	return p.doc, p.err
}

// Known reports whether name is an embedded preset.
func Known(name string) bool {
	for _, n := range Names() {
		if n == name {
			return true
		}
	}
	return false
}

// Source returns a preset's YAML text.
func Source(name string) ([]byte, error) {
	return files.ReadFile(name + ".yaml")
}

// Architecture is the model class a preset's stages load (`model_arch`),
// such as Qwen3OmniMoeForConditionalGeneration, or "" when the preset does
// not say.
func Architecture(name string) string {
	doc, err := Shared(name)
	if err != nil {
		return ""
	}
	for _, s := range doc.Stages() {
		if arch, ok := s.EngineString("model_arch"); ok && arch != "" {
			return arch
		}
	}
	return ""
}

// HubModel reports whether model is a Hugging Face id (org/name) rather
// than a local path. Only an id says which model it is: a local directory
// may hold any weights whatever its name, so nothing is inferred about its
// architecture beyond choosing a default preset.
func HubModel(model string) bool {
	org, name, ok := strings.Cut(model, "/")
	return ok && org != "" && name != "" && !strings.Contains(name, "/") && !strings.HasPrefix(model, ".")
}
