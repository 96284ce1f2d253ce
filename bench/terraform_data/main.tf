# One terraform_data resource holding a pipeline's inputs: Terraform's own
# cost per object, the floor for any provider. Variant c of scripts/bench.sh
# with BENCH_LAYOUT=module (the default); see PERFORMANCE.md.

variable "model" {
  type = string
}

variable "reserved_ports" {
  type    = set(number)
  default = []
}

resource "terraform_data" "this" {
  input = {
    model          = var.model
    reserved_ports = var.reserved_ports
  }
}

output "id" {
  value = terraform_data.this.id
}
