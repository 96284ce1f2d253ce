package stageconfig

import "fmt"

// Dialect names one of the two YAML shapes vllm-omni has used for a
// multi-stage pipeline.
type Dialect string

const (
	// StageArgs is the original dialect: a top-level `stage_args:` list with
	// nested `engine_args:` and the topology written in the YAML.
	StageArgs Dialect = "stage_args"
	// Stages is the current upstream dialect: a top-level `stages:` list with
	// flat engine keys and the topology held in a registered pipeline.
	Stages Dialect = "stages"
)

// dialects lists the dialects in the order they are documented.
var dialects = []Dialect{StageArgs, Stages}

// ParseDialect checks a dialect name given by a user.
func ParseDialect(s string) (Dialect, error) {
	switch Dialect(s) {
	case StageArgs, Stages:
		return Dialect(s), nil
	}
	return "", fmt.Errorf("unknown format %q: use %q or %q", s, StageArgs, Stages)
}

// listKey is the top-level key that holds the stage list in this dialect.
func (d Dialect) listKey() string { return string(d) }
