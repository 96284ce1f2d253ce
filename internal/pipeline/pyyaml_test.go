package pipeline

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
	"go.yaml.in/yaml/v3"
)

// Whole planned configs read back by Python: kept here rather than beside
// one step's file.

// pythonReaders are the ways vllm-omni reads a deploy config: PyYAML's safe
// loader, and OmegaConf.load, which the config loaders use (PyYAML with
// OmegaConf's own float rule, interpolations left unresolved here). Each
// prints the config as JSON.
var pythonReaders = []struct{ name, module, script string }{
	{"PyYAML", "yaml", `import sys, json, yaml
json.dump(yaml.safe_load(sys.stdin), sys.stdout, sort_keys=True)`},
	{"OmegaConf", "omegaconf", `import sys, json
from omegaconf import OmegaConf
json.dump(OmegaConf.to_container(OmegaConf.load(sys.stdin), resolve=False), sys.stdout, sort_keys=True)`},
}

// vllm-omni loads configs with PyYAML, which follows YAML 1.1 where Go's
// yaml.v3 follows 1.2 (on, off, yes, 1:30, 1e-05 differ), through
// OmegaConf. This test has both read every planned config and checks they
// see the same data as the Go side.
func TestPlannedConfigsReadByPython(t *testing.T) {
	specs := map[string]Spec{
		"user values": {Model: seedModel,
			Prefill:   RoleSpec{EngineArgs: map[string]any{"mode": "on", "eps": 1e-05, "when": "1:30", "eq": "=", "empty": "", "nul": nil}},
			Connector: ConnectorSpec{ExtraConfig: map[string]any{"flag": "off", "list": []any{"yes", "no", int64(1)}}}},
	}
	for _, tc := range goldenCases() {
		specs[tc.name] = tc.spec(t)
	}
	for _, reader := range pythonReaders {
		t.Run(reader.name, func(t *testing.T) {
			py := testtool.Python(t, reader.module)
			for name, spec := range specs {
				t.Run(name, func(t *testing.T) {
					res := mustPlan(t, spec)
					cmd := exec.Command(py, "-c", reader.script)
					cmd.Stdin = strings.NewReader(res.ConfigYAML)
					var out, errb bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &errb
					if err := cmd.Run(); err != nil {
						t.Fatalf("%s cannot read the planned config: %v\n%s", reader.name, err, errb.String())
					}
					var py any
					if err := json.Unmarshal(out.Bytes(), &py); err != nil {
						t.Fatal(err)
					}
					var goVal any
					if err := yaml.Unmarshal([]byte(res.ConfigYAML), &goVal); err != nil {
						t.Fatal(err)
					}
					b, err := json.Marshal(goVal)
					if err != nil {
						t.Fatal(err)
					}
					var goJSON any
					if err := json.Unmarshal(b, &goJSON); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(py, goJSON) {
						t.Errorf("%s and yaml.v3 read the planned config differently:\n%s", reader.name, mapDiff("", py, goJSON))
					}
				})
			}
		})
	}
}
