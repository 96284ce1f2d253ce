package provider

import (
	"context"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"os"
	"testing"

	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// testProviders serves the provider in-process under the name the test
// configurations use ("omni"), so no build or registry is involved. It is
// the server Serve runs, direct reads included.
// testProviders serves the acceptance tests through the path Terraform
// users get, directServer in front of the framework, or with
// OMNI_TEST_SERVER=framework through the framework alone: `make test` runs
// the package both ways, so that a framework feature the direct path lacks
// (a config validator, a plan modifier, ...) fails a test.
var testProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": func() (tfprotov6.ProviderServer, error) {
		if testServerPath() == "framework" {
			return providerserver.NewProtocol6(New("test")())(), nil
		}
		return newServer("test")(), nil
	},
}

func testServerPath() string {
	switch p := os.Getenv("OMNI_TEST_SERVER"); p {
	case "", "direct":
		return "direct"
	case "framework":
		return p
	default:
		panic("OMNI_TEST_SERVER must be direct or framework, not " + p)
	}
}

// seedModel is the model of vllm-omni's PD recipe; with it alone the
// provider must reproduce the recipe.
const seedModel = "Qwen/Qwen3-Omni-30B-A3B-Instruct"

func TestMain(m *testing.M) {
	// Never phone home from tests, wherever they run.
	if os.Getenv("CHECKPOINT_DISABLE") == "" {
		_ = os.Setenv("CHECKPOINT_DISABLE", "1")
	}
	os.Exit(m.Run())
}

func TestProvider_Metadata(t *testing.T) {
	var resp fwprovider.MetadataResponse
	New("1.2.3")().Metadata(context.Background(), fwprovider.MetadataRequest{}, &resp)
	if resp.TypeName != "omni" || resp.Version != "1.2.3" {
		t.Fatalf("metadata = %+v", resp)
	}
}

func TestProvider_Schema(t *testing.T) {
	var resp fwprovider.SchemaResponse
	New("test")().Schema(context.Background(), fwprovider.SchemaRequest{}, &resp)
	if len(resp.Schema.Attributes) != 0 || len(resp.Schema.Blocks) != 0 {
		t.Error("the provider takes no configuration")
	}
	if resp.Schema.MarkdownDescription == "" {
		t.Error("provider schema has no MarkdownDescription")
	}
	if diags := resp.Schema.ValidateImplementation(context.Background()); diags.HasError() {
		t.Error(diags)
	}
}
