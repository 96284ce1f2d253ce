package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// accTest runs steps as one acceptance test case against the provider
// served in process (testProviders). It is resource.UnitTest, so it needs
// no TF_ACC: these tests touch no machine and are the provider's main
// suite. Steps that name their own provider (the state upgrade tests plan
// with an older build first) keep it, and then every step must name one,
// as terraform-plugin-testing requires.
func accTest(t *testing.T, steps ...resource.TestStep) {
	t.Helper()
	accCase(t, resource.TestCase{Steps: steps})
}

// functionTest is accTest for configurations that call provider functions,
// which need Terraform 1.8 or later: on an older CLI the test is skipped
// with a message that says so (functionVersionChecks).
func functionTest(t *testing.T, steps ...resource.TestStep) {
	t.Helper()
	accCase(t, resource.TestCase{TerraformVersionChecks: functionVersionChecks(), Steps: steps})
}

func accCase(t *testing.T, tc resource.TestCase) {
	t.Helper()
	perStep := false
	for _, s := range tc.Steps {
		perStep = perStep || s.ProtoV6ProviderFactories != nil
	}
	if !perStep {
		tc.ProtoV6ProviderFactories = testProviders
	}
	resource.UnitTest(t, tc)
}
