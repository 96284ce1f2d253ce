package pipeline

import (
	"fmt"
	"sort"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/envvar"
)

// Every value of base_config, an engine_args, stage_overrides and
// connector.extra_config is stored in Terraform state and shown in the
// plan as soon as the plan succeeds, and the planner writes it into the
// deploy config and the units, which reach each machine's user_data. The
// units read systemd.environment_file for secrets, which Terraform never
// sees. envvar.Secret is the one rule for what is a secret; here it is
// applied to every text value of those inputs: plainly a secret is an
// error, since a warning cannot keep the value out of state; a key whose
// name alone says so is a warning (envvar.SecretByName says why).

// checkInputSecrets judges the free-form inputs: prefill's and decode's
// engine_args, each stage override's engine_args, and the connector's
// extra_config.
func (p *planner) checkInputSecrets() {
	roots := []struct {
		path Path
		v    any
	}{
		{AttrPath("prefill", "engine_args"), p.spec.Prefill.EngineArgs},
		{AttrPath("decode", "engine_args"), p.spec.Decode.EngineArgs},
		{AttrPath("connector", "extra_config"), p.spec.Connector.ExtraConfig},
	}
	for _, name := range sortedStrings(p.spec.StageOverrides) {
		roots = append(roots, struct {
			path Path
			v    any
		}{AttrPath("stage_overrides", name, "engine_args"), p.spec.StageOverrides[name].EngineArgs})
	}
	for _, r := range roots {
		p.walkSecrets(r.path, "", r.v)
	}
}

// walkSecrets judges every text under v, key being the nearest key.
func (p *planner) walkSecrets(at Path, key string, v any) {
	switch x := v.(type) {
	case string:
		if key != "" {
			p.judgeSecret(at, at.String(), key, x)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p.walkSecrets(at.Attr(k), k, x[k])
		}
	case []any:
		for i, e := range x {
			p.walkSecrets(at.Index(i), key, e)
		}
	}
}

// checkBaseSecrets judges every text value of the user's base config; the
// presets hold none.
func (p *planner) checkBaseSecrets() {
	if p.spec.BaseConfig == "" {
		return
	}
	for _, t := range p.base.Texts() {
		p.judgeSecret(p.basePath, fmt.Sprintf("line %d: %s", t.Line, t.Path), t.Key, t.Value)
	}
}

// judgeSecret reports one value, named by where, at the attribute at.
func (p *planner) judgeSecret(at Path, where, key, value string) {
	s, why := envvar.Secret(key, value)
	file := p.spec.Service.withDefaults().EnvironmentFile
	switch s {
	case envvar.PlainSecret:
		p.ds.errorf(diagcode.SecretInState, at, "a secret would be stored in Terraform state",
			"%s %s. Terraform stores this value in its state and shows it in the plan, and the plan writes it into the deploy config and the machines' user_data: put it in systemd.environment_file (%s) on the machine, such as HF_TOKEN=... for a Hugging Face token, which the units read and Terraform never sees, and remove it here.",
			where, why, file)
	case envvar.SecretByName:
		p.ds.warnf(diagcode.SecretByName, at, "a value under a credential's name is stored in Terraform state",
			"%s %s, and Terraform stores its value in its state and the machines' user_data. If it is a secret, put it in systemd.environment_file (%s) on the machine, which the units read and Terraform never sees, and remove it here; a placeholder such as EMPTY, or a path to a file, gives no warning.",
			where, why, file)
	}
}
