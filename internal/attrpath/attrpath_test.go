package attrpath

import "testing"

func TestString(t *testing.T) {
	for want, p := range map[string]Path{
		"":                           nil,
		"prefill.devices[1]":         Of("prefill", "devices").Index(1),
		"container.mounts[0].target": Of("container", "mounts").Index(0).Attr("target"),
		"[2]":                        Path{}.Index(2),
	} {
		if got := p.String(); got != want {
			t.Errorf("%#v: %q, want %q", p, got, want)
		}
	}
}

// Extending a path never writes into the storage of the path it extends,
// so two paths built from one base stay apart.
func TestExtendDoesNotShare(t *testing.T) {
	base := make(Path, 1, 4)
	base[0] = Step{Name: "stage_overrides"}
	a, b := base.Attr("a"), base.Attr("b")
	if a.String() != "stage_overrides.a" || b.String() != "stage_overrides.b" {
		t.Errorf("a = %s, b = %s", a, b)
	}
}
