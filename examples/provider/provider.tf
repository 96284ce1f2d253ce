terraform {
  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

# The provider takes no configuration: it computes everything locally, at
# plan time, and calls no API.
provider "omni" {}
