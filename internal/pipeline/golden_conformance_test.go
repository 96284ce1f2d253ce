package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// Whole-plan checks over the goldens: they stay beside golden_test.go.

// TestGoldenConform runs the release conformance checks over the committed
// golden files themselves, each against the release it was planned for:
// what the provider ships for release R is what R starts.
func TestGoldenConform(t *testing.T) {
	for _, tc := range append(goldenCases(), containerGoldenCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "golden")
			config, err := os.ReadFile(filepath.Join(dir, tc.name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, tc.name+".launch.json"))
			if err != nil {
				t.Fatal(err)
			}
			var launch struct {
				Release  string
				Launches []Launch
			}
			if err := json.Unmarshal(raw, &launch); err != nil {
				t.Fatal(err)
			}
			doc, err := stageconfig.Parse(config)
			if err != nil {
				t.Fatal(err)
			}
			var rel releases.Release
			for _, r := range releases.Table {
				if r.Version == launch.Release {
					rel = r
				}
			}
			if rel.Version == "" {
				t.Fatalf("golden release %q is not in the table", launch.Release)
			}
			spec := tc.spec(t)
			res := mustPlan(t, spec)
			// The key is registered outside the release: by the user's
			// module, or by the one the plan writes.
			d := deploymentOf(doc, res.Stages, launch.Launches, res.Registration != nil || spec.Pipeline != "" && !rel.Registers(spec.Pipeline))
			if len(d.Argvs) == 0 {
				t.Fatal("the golden launch has no process")
			}
			if vs := releases.Conform(rel, d); len(vs) > 0 {
				t.Errorf("vllm-omni %s would refuse the golden output: %v", rel.Version, vs)
			}
		})
	}
}
