package provider

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

type ctxKey struct{}

// fakeReader records the context the framework would get.
type fakeReader struct {
	tfprotov6.ProviderServer
	check func(ctx context.Context)
}

func (f fakeReader) ReadDataSource(ctx context.Context, _ *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	f.check(ctx)
	return &tfprotov6.ReadDataSourceResponse{}, nil
}

// The framework gets none of the request context's values, and the call is
// still cancelled with the request.
func TestDetached_Context(t *testing.T) {
	req, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "request"))
	defer cancel()
	called := false
	s := detached{fakeReader{check: func(ctx context.Context) {
		called = true
		if ctx.Value(ctxKey{}) != nil {
			t.Error("the framework got the request context's values")
		}
		cancel()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Error("cancelling the request did not cancel the call")
		}
	}}}
	if _, err := s.ReadDataSource(req, &tfprotov6.ReadDataSourceRequest{}); err != nil || !called {
		t.Fatalf("err = %v, called = %v", err, called)
	}
}

// The framework keeps every call's context until the provider stops; through
// detached, a request context's values (in Terraform: loggers, the gRPC
// stream) are not among what it keeps.
func TestDetached_KeepsNoRequestContext(t *testing.T) {
	_, config := benchServer(t)
	s := detached{providerserver.NewProtocol6(New("test")())()}
	req := &tfprotov6.ValidateDataResourceConfigRequest{TypeName: benchDataSource, Config: config}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	const calls, payload = 500, 64 << 10
	before := heap()
	for range calls {
		ctx := context.WithValue(context.Background(), ctxKey{}, make([]byte, payload))
		if resp, err := s.ValidateDataResourceConfig(ctx, req); err != nil || len(resp.Diagnostics) > 0 {
			t.Fatalf("%v %v", err, resp.Diagnostics)
		}
	}
	// Kept request contexts would hold calls × payload bytes; an eighth of
	// that leaves room for the heap's own noise and still catches them.
	grown := int64(heap()) - int64(before)
	runtime.KeepAlive(s) // the server is what would keep the contexts
	if grown > calls*payload/8 {
		t.Errorf("heap grew by %d KiB over %d calls: request contexts are kept", grown>>10, calls)
	}
}
