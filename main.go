// SPDX-License-Identifier: MPL-2.0

// Command terraform-provider-omni serves the omni Terraform provider over
// plugin protocol 6.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

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

	opts := providerserver.ServeOpts{
		Address:         "registry.terraform.io/omnipd/omni",
		Debug:           debug,
		ProtocolVersion: 6,
	}

	if err := providerserver.Serve(context.Background(), provider.New(version), opts); err != nil {
		log.Fatal(err.Error())
	}
}
