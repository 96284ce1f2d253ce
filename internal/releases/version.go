package releases

import (
	"fmt"
	"regexp"
	"strconv"
)

// Version is a vllm-omni version as users write it: a release line
// ("0.24"), an exact release ("0.24.0") or a release candidate
// ("0.27.0rc1"). Versions follow vLLM's numbering, PEP 440 style.
type Version struct {
	Major, Minor, Patch int
	RC                  int  // 0 for a final release
	HasPatch            bool // false for a line: X.Y
}

var versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})(?:\.(0|[1-9][0-9]{0,3})(?:rc([1-9][0-9]{0,2}))?)?$`)

// ParseVersion reads "X.Y", "X.Y.Z" or "X.Y.ZrcN".
func ParseVersion(s string) (Version, error) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a vllm-omni version: write a release line such as \"0.24\", a release such as \"0.24.0\", or a release candidate such as \"0.27.0rc1\"", s)
	}
	v := Version{}
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.HasPatch = true
		v.Patch, _ = strconv.Atoi(m[3])
	}
	if m[4] != "" {
		v.RC, _ = strconv.Atoi(m[4])
	}
	return v, nil
}

// MustVersion parses a version from the release table; a malformed one is
// a defect the table's tests catch.
func MustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String writes the version back in the form it was parsed from.
func (v Version) String() string {
	s := strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
	if !v.HasPatch {
		return s
	}
	s += "." + strconv.Itoa(v.Patch)
	if v.RC > 0 {
		s += "rc" + strconv.Itoa(v.RC)
	}
	return s
}

// Line is the release line "X.Y".
func (v Version) Line() string { return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) }

// Compare orders exact versions: a release candidate comes before its
// final release. It returns -1, 0 or 1.
func (v Version) Compare(w Version) int {
	for _, d := range [][2]int{{v.Major, w.Major}, {v.Minor, w.Minor}, {v.Patch, w.Patch}} {
		if d[0] != d[1] {
			return cmpInt(d[0], d[1])
		}
	}
	switch {
	case v.RC == w.RC:
		return 0
	case v.RC == 0:
		return 1
	case w.RC == 0:
		return -1
	}
	return cmpInt(v.RC, w.RC)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Matches reports whether an exact release v is what the user's version w
// names: the same release, or any release of w's line when w is a line.
func (v Version) Matches(w Version) bool {
	if v.Major != w.Major || v.Minor != w.Minor {
		return false
	}
	return !w.HasPatch || v.Compare(w) == 0
}
