// Package boot holds the boot test: every deployment under
// examples/deployments is planned and applied with the provider, and each
// machine it describes is booted from its own rendered user_data in a
// systemd-nspawn container (real systemd as PID 1, real cloud-init reading
// a NoCloud seed), with a stand-in for vllm (standin/vllm) and for
// nvidia-smi, the only parts that need a GPU. Machines of one deployment
// share a network of their own: network namespaces the test makes, with
// no route out, each machine at exactly the address the plan names.
//
// The package has test files only; it builds nothing into the provider.
package boot
