terraform {
  required_version = ">= 1.8"

  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}
