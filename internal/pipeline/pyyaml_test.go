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

// pythonJSON runs script with the interpreter py on src, given on stdin,
// and decodes the JSON it prints; reader names it in the failure.
func pythonJSON(t *testing.T, py, reader, script, src string) any {
	t.Helper()
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(src)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s cannot read the config: %v\n%s\n%s", reader, err, stderr.String(), src)
	}
	var v any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	return v
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
					pyVal := pythonJSON(t, py, reader.name, reader.script, res.ConfigYAML)
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
					if !reflect.DeepEqual(pyVal, goJSON) {
						t.Errorf("%s and yaml.v3 read the planned config differently:\n%s", reader.name, mapDiff("", pyVal, goJSON))
					}
				})
			}
		})
	}
}
