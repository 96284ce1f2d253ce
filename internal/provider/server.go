package provider

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// Serve serves the provider to Terraform over plugin protocol 6 under
// address, as providerserver.Serve does, with three changes for plans that
// read or re-plan many pipelines (PERFORMANCE.md). The first two apply only
// while no one can see the provider's logs: Terraform shows them only when
// TF_LOG or TF_LOG_PROVIDER is set, and debug runs keep them.
//
//   - The plugin SDK's logs are turned off. By default the SDK writes every
//     trace line of every call as JSON, which Terraform parses and then
//     drops. The SDK reads its level from the environment when it builds
//     each call's logger, so setting TF_LOG_SDK* in the provider's own
//     process (Terraform starts one per plan step) is the only switch; a
//     TF_LOG_SDK* variable the user sets wins.
//   - Each per-instance call reaches the framework with a fresh context.
//     The framework keeps the context of every call until the provider
//     stops (to cancel it on StopProvider), and a gRPC request's context
//     holds the SDK's loggers and the stream: memory grew with every
//     pipeline planned. Cancelling the request still cancels the call.
//
// It also collects garbage less often (GOGC=800 unless GOGC is set), a
// setting of this process alone: its live heap stays small however many
// pipelines a plan reads, while every call allocates afresh (most of it
// yaml.v3's queue of a config's events), so the default collected every
// few calls. A provider process lives for one plan step, and a larger heap
// goal lets most of that garbage go with it; peak memory rises in
// exchange, to about 75 MiB in a plan of 1000 pipelines (PERFORMANCE.md).
// A user's GOGC wins.
//
// front, when not nil, is put in front of the framework's server
// (main.go passes internal/direct's Wrap, which cannot be imported here:
// it calls this package).
func Serve(address, version string, debugging bool, front func(func() tfprotov6.ProviderServer) func() tfprotov6.ProviderServer) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(800)
	}
	framework := NewProtocol6(version)
	var opts []tf6server.ServeOpt
	switch {
	case debugging:
		opts = append(opts, tf6server.WithManagedDebug())
	case os.Getenv("TF_LOG") == "" && os.Getenv("TF_LOG_PROVIDER") == "":
		for _, name := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
			if _, set := os.LookupEnv(name); !set {
				_ = os.Setenv(name, "OFF")
			}
		}
		plain := framework
		framework = func() tfprotov6.ProviderServer { return detached{plain()} }
	}
	if front != nil {
		framework = front(framework)
	}
	return tf6server.Serve(address, framework, opts...)
}

// detached passes the calls Terraform makes for every resource, data source
// and function call to the framework with a fresh context (see Serve).
type detached struct{ tfprotov6.ProviderServer }

// call runs f with a context that has none of ctx's values and is cancelled
// when ctx is.
func call[Req, Resp any](ctx context.Context, f func(context.Context, Req) (Resp, error), req Req) (Resp, error) {
	fresh, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return f(fresh, req)
}

func (s detached) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return call(ctx, s.ProviderServer.ValidateDataResourceConfig, req)
}

func (s detached) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return call(ctx, s.ProviderServer.ReadDataSource, req)
}

func (s detached) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return call(ctx, s.ProviderServer.ValidateResourceConfig, req)
}

func (s detached) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return call(ctx, s.ProviderServer.UpgradeResourceState, req)
}

func (s detached) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return call(ctx, s.ProviderServer.ReadResource, req)
}

func (s detached) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return call(ctx, s.ProviderServer.PlanResourceChange, req)
}

func (s detached) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return call(ctx, s.ProviderServer.ApplyResourceChange, req)
}

func (s detached) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return call(ctx, s.ProviderServer.CallFunction, req)
}
