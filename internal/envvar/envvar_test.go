package envvar

import "testing"

func TestCheck(t *testing.T) {
	for _, ok := range [][2]string{{"A", ""}, {"_", "x"}, {"a1_B", "é 😀 $HOME %n \\ \"q\""}, {"X", "\u2028\ufeff"}} {
		if err := Check(ok[0], ok[1]); err != nil {
			t.Errorf("%q=%q: %v", ok[0], ok[1], err)
		}
	}
	for _, bad := range [][2]string{{"", "x"}, {"1X", "x"}, {"A-B", "x"}, {"A.B", "x"}, {"A B", "x"}, {"É", "x"}, {"A=B", "x"},
		{"A", "a\nb"}, {"A", "a\tb"}, {"A", "a\rb"}, {"A", "\x00"}, {"A", "\x7f"}, {"A", "\u0085"}, {"A", "\ufdd0"}, {"A", "\ufdef"},
		{"A", "\ufffe"}, {"A", "\U0001ffff"}, {"A", "\U0010ffff"}, {"A", "\xff"}} {
		if err := Check(bad[0], bad[1]); err == nil {
			t.Errorf("%q=%q accepted", bad[0], bad[1])
		}
	}
}
