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
func checkInputSecrets(spec Spec, ds *Diagnostics) {
	roots := []struct {
		path Path
		v    any
	}{
		{AttrPath("prefill", "engine_args"), spec.Prefill.EngineArgs},
		{AttrPath("decode", "engine_args"), spec.Decode.EngineArgs},
		{AttrPath("connector", "extra_config"), spec.Connector.ExtraConfig},
	}
	for _, name := range sortedStrings(spec.StageOverrides) {
		roots = append(roots, struct {
			path Path
			v    any
		}{AttrPath("stage_overrides", name, "engine_args"), spec.StageOverrides[name].EngineArgs})
	}
	for _, r := range roots {
		walkSecrets(spec.Service, r.path, "", r.v, ds)
	}
}

// walkSecrets judges every text under v, key being the nearest key; svc
// says where the secrets belong.
func walkSecrets(svc ServiceSpec, at Path, key string, v any, ds *Diagnostics) {
	switch x := v.(type) {
	case string:
		if key != "" {
			judgeSecret(svc, at, at.String(), key, x, ds)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkSecrets(svc, at.Attr(k), k, x[k], ds)
		}
	case []any:
		for i, e := range x {
			walkSecrets(svc, at.Index(i), key, e, ds)
		}
	}
}

// checkBaseSecrets judges every text value of the user's base config; the
// presets hold none.
func checkBaseSecrets(base baseConfig, svc ServiceSpec, ds *Diagnostics) {
	if !base.user() {
		return
	}
	for _, t := range base.doc.Texts() {
		judgeSecret(svc, base.path, fmt.Sprintf("line %d: %s", t.Line, t.Path), t.Key, t.Value, ds)
	}
}

// judgeSecret reports one value, named by where, at the attribute at; the
// units of svc read secrets from its environment file.
func judgeSecret(svc ServiceSpec, at Path, where, key, value string, ds *Diagnostics) {
	s, why := envvar.Secret(key, value)
	file := svc.withDefaults().EnvironmentFile
	switch s {
	case envvar.PlainSecret:
		ds.errorf(diagcode.SecretInState, at, "a secret would be stored in Terraform state",
			"%s %s. Terraform stores this value in its state and shows it in the plan, and the plan writes it into the deploy config and the machines' user_data: put it in systemd.environment_file (%s) on the machine, such as HF_TOKEN=... for a Hugging Face token, which the units read and Terraform never sees, and remove it here.",
			where, why, file)
	case envvar.SecretByName:
		ds.warnf(diagcode.SecretByName, at, "a value under a credential's name is stored in Terraform state",
			"%s %s, and Terraform stores its value in its state and the machines' user_data. If it is a secret, put it in systemd.environment_file (%s) on the machine, which the units read and Terraform never sees, and remove it here; a placeholder such as EMPTY, or a path to a file, gives no warning.",
			where, why, file)
	}
}
