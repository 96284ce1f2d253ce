package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// The prose that names the supported range follows the release table: a
// new row that leaves "0.20.0 to 0.32.0" behind fails here, naming the
// file to change.
func TestDocs_ReleaseRangeFollowsTheTable(t *testing.T) {
	first, last := releases.Table[0].Version, releases.Table[len(releases.Table)-1].Version
	for file, pattern := range map[string]*regexp.Regexp{
		"README.md": regexp.MustCompile(`supported: (\S+) to (\S+);`),
		filepath.Join("templates", "index.md.tmpl"): regexp.MustCompile(`The supported releases are (\S+), the first that runs\s+PD, to (\S+);`),
	} {
		src, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		m := pattern.FindSubmatch(src)
		if m == nil {
			t.Errorf("%s no longer says which releases are supported (%s): keep the sentence, or change this test", file, pattern)
			continue
		}
		if string(m[1]) != first || string(m[2]) != last {
			t.Errorf("%s says %s to %s; the release table holds %s to %s", file, m[1], m[2], first, last)
		}
	}
}
