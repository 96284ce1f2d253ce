// SPDX-License-Identifier: MPL-2.0

// Command terraform-provider-omni serves the omni Terraform provider over
// plugin protocol 6.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"

	"github.com/omnipd/terraform-provider-omni/internal/direct"
	"github.com/omnipd/terraform-provider-omni/internal/provider"
)

// version is overwritten at release time by goreleaser's ldflags
// (-X main.version={{.Version}}); "dev" marks a local build. The release
// ldflags also set main.commit, which the linker ignores while no such
// variable exists.
var version = "dev"

func main() {
	var debug bool

	// -debug runs the provider in-process so a debugger can attach; Terraform
	// then connects to it through TF_REATTACH_PROVIDERS, printed on start.
	flag.BoolVar(&debug, "debug", false, "set to true to run the provider with support for debuggers like delve")
	flag.Parse()

	// OMNI_CPUPROFILE=prefix writes a CPU profile of each provider process
	// to prefix.<pid> (Terraform starts several per plan), read with
	// `go tool pprof`; see PERFORMANCE.md. Unset, it does nothing.
	if prefix := os.Getenv("OMNI_CPUPROFILE"); prefix != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}

	// provider.Serve is providerserver.Serve for protocol 6, made lighter for
	// plans of many pipelines while no one reads the provider's logs;
	// direct.Wrap answers the validations, the resource's refreshes and
	// plans and the data source's reads without the framework's generic
	// passes (internal/direct).
	if err := provider.Serve("registry.terraform.io/omnipd/omni", version, debug, direct.Wrap); err != nil {
		log.Fatal(err.Error())
	}
}
