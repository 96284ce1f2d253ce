// Command diagdoc writes the diagnostic codes' docs page (a tfplugindocs
// template) from internal/diagcode, so the docs and the emitters read the
// same catalogue. `make docs` runs it through `go generate`.
package main

import (
	"fmt"
	"os"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: diagdoc OUTPUT.md.tmpl")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(diagcode.Markdown()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
