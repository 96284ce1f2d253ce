// Command docpage writes a generated docs page (a tfplugindocs template)
// from the package that holds its data, so the docs and the code read the
// same table: `releases` for the release table, `diagnostics` for the
// diagnostic codes' catalogue, `models` for the presets and the published
// models they are chosen for. `make docs` runs it through `go generate`.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

var pages = map[string]func() string{
	"diagnostics": diagcode.Markdown,
	"models":      presets.Markdown,
	"releases":    func() string { return releases.Markdown(presets.Names(), presets.Shared) },
}

func main() {
	if len(os.Args) != 3 || pages[os.Args[1]] == nil {
		names := make([]string, 0, len(pages))
		for name := range pages {
			names = append(names, name)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "usage: docpage %s OUTPUT.md.tmpl\n", strings.Join(names, "|"))
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[2], []byte(pages[os.Args[1]]()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
