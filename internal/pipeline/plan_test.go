package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// Result.ID changes exactly when what a machine runs changes: the config,
// a process's command or its systemd unit.
func TestPlanContentID(t *testing.T) {
	seed := Spec{Model: seedModel}
	across := Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
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
		{"another head wait, in the template", seed, Spec{Model: seedModel, Service: ServiceSpec{HeadWaitSeconds: ptr(60)}}, true, false},
		{"another config", seed, Spec{Model: seedModel, Decode: RoleSpec{MaxNumSeqs: ptr(8)}}, false, false},
		{"the same plan across hosts", across, across, true, true},
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
			if want := naiveContentID(a); a.ID != want {
				t.Errorf("id %s, want %s: the SHA-256 of the config and of each host, command and unit", a.ID, want)
			}
		})
	}
}

// naiveContentID hashes what Result.ID covers, written out: the config,
// then, each after a NUL, the check script's SHA-256 and path, the unit
// file, and for each launch its host and for each process its unit name and
// drop-in.
func naiveContentID(res *Result) string {
	h := sha256.New()
	h.Write([]byte(res.ConfigYAML))
	parts := []string{checkScriptSHA256, res.CheckScriptPath, res.SystemdUnit.Path, res.SystemdUnit.Content}
	for _, l := range res.Launches {
		parts = append(parts, l.Host)
		for _, proc := range l.Processes {
			parts = append(parts, proc.UnitName)
			if proc.DropIn != nil {
				parts = append(parts, proc.DropIn.Path, proc.DropIn.Content)
			}
		}
	}
	for _, p := range parts {
		h.Write([]byte("\x00" + p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The check script is part of what a machine runs: another script is
// another id, every other output the same.
func TestPlanContentIDFollowsTheCheckScript(t *testing.T) {
	before := mustPlan(t, Spec{Model: seedModel})
	saved := checkScriptSHA256
	t.Cleanup(func() { checkScriptSHA256 = saved })
	checkScriptSHA256 = strings.Repeat("0", 64)
	after := mustPlan(t, Spec{Model: seedModel})
	if before.ID == after.ID || before.SystemdUnit != after.SystemdUnit {
		t.Errorf("ids %s and %s for two check scripts, units equal: %v", before.ID, after.ID, before.SystemdUnit == after.SystemdUnit)
	}
}
