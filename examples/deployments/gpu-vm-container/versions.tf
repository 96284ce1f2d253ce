terraform {
  required_version = ">= 1.8.0"

  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

provider "omni" {}
