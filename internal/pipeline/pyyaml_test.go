package pipeline

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// vllm-omni loads configs with PyYAML, which follows YAML 1.1 where Go's
// yaml.v3 follows 1.2 (on, off, yes, 1:30, 1e-05 differ). When python3 with
// PyYAML is on the machine, this test has it read every planned config and
// checks it sees the same data as the Go side.
func TestPlannedConfigsReadByPyYAML(t *testing.T) {
	const script = `import sys, json, yaml
json.dump(yaml.safe_load(sys.stdin), sys.stdout, sort_keys=True)`
	if err := exec.Command("python3", "-c", "import yaml").Run(); err != nil {
		t.Skip("python3 with PyYAML is not available")
	}
	specs := map[string]Spec{
		"user values": {Model: seedModel,
			Prefill:   RoleSpec{EngineArgs: map[string]any{"mode": "on", "eps": 1e-05, "when": "1:30", "eq": "=", "empty": "", "nul": nil}},
			Connector: ConnectorSpec{ExtraConfig: map[string]any{"flag": "off", "list": []any{"yes", "no", int64(1)}}}},
	}
	for _, tc := range goldenCases() {
		specs[tc.name] = tc.spec(t)
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			res := mustPlan(t, spec)
			cmd := exec.Command("python3", "-c", script)
			cmd.Stdin = strings.NewReader(res.ConfigYAML)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("PyYAML cannot read the planned config: %v\n%s", err, errb.String())
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
				t.Errorf("PyYAML and yaml.v3 read the planned config differently:\n%s", mapDiff("", py, goJSON))
			}
		})
	}
}
