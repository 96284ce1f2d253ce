package stageconfig

import (
	"math"
	"testing"
)

func TestConnectorsShape(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		where     string
		want      *NotAMapping
	}{
		{"stages none", "stages: []\n", "connectors", nil},
		{"stages mapping", "stages: []\nconnectors: {a: {}}\n", "connectors", nil},
		{"stages not a mapping", "stages: []\n\nconnectors: [a]\n", "connectors", &NotAMapping{"connectors", 3}},
		{"stages ignores a runtime scalar", "stages: []\nruntime: off\n", "connectors", nil},
		{"stage_args none", "stage_args: []\n", "runtime.connectors", nil},
		{"stage_args runtime not a mapping", "stage_args: []\nruntime: [x]\n", "runtime.connectors", &NotAMapping{"runtime", 2}},
		{"stage_args connectors not a mapping", "stage_args: []\nruntime:\n  enabled: true\n  connectors: x\n", "runtime.connectors", &NotAMapping{"runtime.connectors", 4}},
		{"stage_args ignores top-level connectors", "stage_args: []\nconnectors: x\n", "runtime.connectors", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.src)
			if got := d.ConnectorsWhere(); got != tc.where {
				t.Errorf("ConnectorsWhere() = %q, want %q", got, tc.where)
			}
			if got := d.connectorsShape(); !deepEqual(got, tc.want) {
				t.Errorf("connectorsShape() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDefineConnector(t *testing.T) {
	def := Map{{"name", "MooncakeConnector"}, {"extra", Map{{"role", Quoted("sender")}, {"port", 25201}}}}
	for _, tc := range []struct {
		name, src, want string
	}{
		{"stages creates the mapping at the top", "stages: []\n",
			"stages: []\nconnectors:\n  mc:\n    name: MooncakeConnector\n    extra:\n      role: \"sender\"\n      port: 25201\n"},
		{"stage_args creates runtime and the mapping", "stage_args: []\n",
			"stage_args: []\nruntime:\n  connectors:\n    mc:\n      name: MooncakeConnector\n      extra:\n        role: \"sender\"\n        port: 25201\n"},
		{"stage_args replaces a definition in place, keeps the others", "stage_args: []\nruntime:\n  enabled: true\n  connectors:\n    # ours\n    mc: {name: old}\n    shm: {name: SharedMemoryConnector}\n",
			"stage_args: []\nruntime:\n  enabled: true\n  connectors:\n    # ours\n    mc:\n      name: MooncakeConnector\n      extra:\n        role: \"sender\"\n        port: 25201\n    shm: {name: SharedMemoryConnector}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.src)
			if err := d.DefineConnector("mc", def); err != nil {
				t.Fatal(err)
			}
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if !d.HasConnector("mc") || d.HasConnector("other") {
				t.Errorf("HasConnector(mc, other) = %t, %t; want true, false", d.HasConnector("mc"), d.HasConnector("other"))
			}
		})
	}
	d := mustParse(t, "stages: []\n")
	if err := d.DefineConnector("bad", Map{{"size", math.NaN()}}); err == nil {
		t.Error("DefineConnector wrote a NaN")
	}
	d = mustParse(t, "stage_args: []\nruntime: [x]\n")
	if err := d.DefineConnector("mc", def); err == nil || err.Error() != "runtime (line 2) is not a mapping" {
		t.Errorf("DefineConnector under a runtime list: %v", err)
	}
	if got := mustRender(t, d); got != "stage_args: []\nruntime: [x]\n" {
		t.Errorf("a failed DefineConnector changed the document:\n%s", got)
	}
}

func TestHasConnectorByDialect(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"stages: []\nconnectors: {mc: {}}\n", true},
		{"stages: []\nruntime: {connectors: {mc: {}}}\n", false},
		{"stage_args: []\nruntime: {connectors: {mc: {}}}\n", true},
		{"stage_args: []\nconnectors: {mc: {}}\n", false},
		{"stage_args: []\nruntime: {connectors: {other: {}}}\n", false},
	} {
		if got := mustParse(t, tc.src).HasConnector("mc"); got != tc.want {
			t.Errorf("HasConnector(mc) in %q = %t, want %t", tc.src, got, tc.want)
		}
	}
}
