// Command releasedoc writes the release table's docs page (a tfplugindocs
// template) from internal/releases, so the docs and the planner read the
// same data. `make docs` runs it through `go generate`.
package main

import (
	"fmt"
	"os"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: releasedoc OUTPUT.md.tmpl")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(releases.Markdown(presets.Names())), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
