package pipeline

import "testing"

// Result.ID changes exactly when what a machine runs changes: the config,
// a process's command or its systemd unit.
func TestPlanContentID(t *testing.T) {
	seed := Spec{Model: seedModel}
	tests := []struct {
		name       string
		a, b       Spec
		sameConfig bool // the two configs are equal, so only the launch differs
		sameID     bool
	}{
		{"same spec", seed, Spec{Model: seedModel}, true, true},
		{"another API port", seed, Spec{Model: seedModel, APIPort: ptr(9000)}, true, false},
		{"another config_path", seed, Spec{Model: seedModel, ConfigPath: "/srv/deploy.yaml"}, true, false},
		{"another unit user", seed, Spec{Model: seedModel, Service: ServiceSpec{User: "omni"}}, true, false},
		{"another config", seed, Spec{Model: seedModel, Decode: RoleSpec{MaxNumSeqs: ptr(8)}}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := mustPlan(t, tc.a), mustPlan(t, tc.b)
			if (a.ConfigYAML == b.ConfigYAML) != tc.sameConfig {
				t.Fatalf("configs equal: %v, want %v", a.ConfigYAML == b.ConfigYAML, tc.sameConfig)
			}
			if (a.ID == b.ID) != tc.sameID {
				t.Errorf("ids %s and %s; want equal: %v", a.ID, b.ID, tc.sameID)
			}
			if len(a.ID) != 64 {
				t.Errorf("id %q is not a SHA-256 in hex", a.ID)
			}
		})
	}
}
