package provider

import (
	"context"
	"os"
	"testing"

	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// testProviders serves the provider in-process under the name the test
// configurations use ("omni"), so no build or registry is involved: the
// framework's protocol-6 server, as Serve runs it.
var testProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"omni": func() (tfprotov6.ProviderServer, error) { return NewProtocol6("test")(), nil },
}

// seedModel is the model of vllm-omni's PD recipe; with it alone the
// provider must reproduce the recipe.
const seedModel = "Qwen/Qwen3-Omni-30B-A3B-Instruct"

func TestMain(m *testing.M) {
	// Never phone home from tests, wherever they run.
	if os.Getenv("CHECKPOINT_DISABLE") == "" {
		_ = os.Setenv("CHECKPOINT_DISABLE", "1")
	}
	code := m.Run()
	testtool.RemoveProviderMirror()
	os.Exit(code)
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
