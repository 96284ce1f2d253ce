package direct

import (
	"bytes"
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/omnipd/terraform-provider-omni/internal/provider"
)

// randomValue is a value of type t: null or unknown at times at every
// level, numbers of every encoding tftypes picks, and maps of at most one
// key when oneKeyMaps is set (tftypes writes a larger map's keys in Go's
// map order, so only those compare byte for byte).
func randomValue(r *rand.Rand, t tftypes.Type, oneKeyMaps bool) tftypes.Value {
	switch r.IntN(12) {
	case 0:
		return tftypes.NewValue(t, nil)
	case 1:
		return tftypes.NewValue(t, tftypes.UnknownValue)
	}
	switch t := t.(type) {
	case tftypes.List:
		return tftypes.NewValue(t, randomValues(r, t.ElementType, r.IntN(4), oneKeyMaps))
	case tftypes.Set:
		return tftypes.NewValue(t, randomValues(r, t.ElementType, r.IntN(2), oneKeyMaps))
	case tftypes.Map:
		n := r.IntN(5)
		if oneKeyMaps {
			n = r.IntN(2)
		}
		elems := map[string]tftypes.Value{}
		for i := range n {
			elems[strings.Repeat("k", i+1)+randomString(r)] = randomValue(r, t.ElementType, oneKeyMaps)
		}
		return tftypes.NewValue(t, elems)
	case tftypes.Tuple:
		elems := make([]tftypes.Value, len(t.ElementTypes))
		for i, et := range t.ElementTypes {
			elems[i] = randomValue(r, et, oneKeyMaps)
		}
		return tftypes.NewValue(t, elems)
	case tftypes.Object:
		attrs := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			attrs[name] = randomValue(r, at, oneKeyMaps)
		}
		return tftypes.NewValue(t, attrs)
	}
	switch {
	case t.Is(tftypes.DynamicPseudoType):
		concrete := []tftypes.Type{
			tftypes.String, tftypes.Number, tftypes.Bool,
			tftypes.List{ElementType: tftypes.String},
			tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.Number, "b": tftypes.Map{ElementType: tftypes.Bool}}},
			tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String, tftypes.Number}},
		}
		return randomValue(r, concrete[r.IntN(len(concrete))], oneKeyMaps)
	case t.Is(tftypes.String):
		return tftypes.NewValue(t, randomString(r))
	case t.Is(tftypes.Number):
		return tftypes.NewValue(t, randomNumber(r))
	case t.Is(tftypes.Bool):
		return tftypes.NewValue(t, r.IntN(2) == 0)
	}
	panic("no random value of type " + t.String())
}

func randomValues(r *rand.Rand, t tftypes.Type, n int, oneKeyMaps bool) []tftypes.Value {
	out := make([]tftypes.Value, n)
	for i := range out {
		out[i] = randomValue(r, t, oneKeyMaps)
	}
	return out
}

func randomString(r *rand.Rand) string {
	if r.IntN(50) == 0 {
		return strings.Repeat("é", 1<<15) // past str16's 65 535 bytes
	}
	lengths := []int{0, 1, 31, 32, 255, 256} // at each msgpack string form's edges
	return strings.Repeat("a", lengths[r.IntN(len(lengths))]) + "ü"
}

func randomNumber(r *rand.Rand) *big.Float {
	switch r.IntN(12) {
	case 0:
		return big.NewFloat(float64(r.IntN(128))) // a fixint
	case 1:
		return big.NewFloat(-float64(r.IntN(1 << 20)))
	case 2:
		return new(big.Float).SetInt64(math.MaxInt64 - r.Int64N(10))
	case 3:
		n, _ := new(big.Float).SetString("123456789012345678901234567890") // an integer past int64
		return n
	case 4:
		return big.NewFloat(r.Float64() * 1e6) // an exact float64
	case 5:
		n, _, _ := big.ParseFloat("0.1", 10, 512, big.ToNearestEven) // not a float64
		return n
	case 6:
		return big.NewFloat(math.Inf(1 - 2*r.IntN(2)))
	case 7:
		return big.NewFloat(math.Copysign(0, -1)) // negative zero, an integer
	case 8:
		return big.NewFloat(1e300) // an integer past int64 that is a float64: text, not a float
	case 9:
		return new(big.Float).SetInt64(math.MinInt64 + r.Int64N(2))
	case 10:
		return big.NewFloat(-r.Float64() * 1e6) // a negative float64
	}
	return big.NewFloat(float64(r.Uint32()))
}

// TestWriteState_SameBytesAsTFTypes: for random values of both schemas'
// types the writer writes the bytes tftypes writes, so Terraform reads
// what it would have read.
func TestWriteState_SameBytesAsTFTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []tftypes.Type{provider.PDPipelineDataSourceType(), provider.PDPipelineResourceType()} {
		for range 400 {
			checkSameBytesAsTFTypes(t, typ, randomValue(r, typ, true))
		}
	}
}

// bothEncodings is v written by the writer and by tftypes.
func bothEncodings(t *testing.T, typ tftypes.Type, v tftypes.Value) (got, want tfprotov6.DynamicValue) {
	t.Helper()
	got, err := writeState(typ, v)
	if err != nil {
		t.Fatalf("writeState(%v): %v", v, err)
	}
	want, err = tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return got, want
}

// checkSameBytesAsTFTypes fails t unless the writer writes v as tftypes does.
func checkSameBytesAsTFTypes(t *testing.T, typ tftypes.Type, v tftypes.Value) {
	t.Helper()
	got, want := bothEncodings(t, typ, v)
	if !bytes.Equal(got.MsgPack, want.MsgPack) {
		at := 0
		for at < min(len(got.MsgPack), len(want.MsgPack)) && got.MsgPack[at] == want.MsgPack[at] {
			at++
		}
		t.Fatalf("writeState of %d bytes differs from tftypes' %d from byte %d on:\n %x\n %x\nvalue %v",
			len(got.MsgPack), len(want.MsgPack), at, got.MsgPack[at:min(at+32, len(got.MsgPack))],
			want.MsgPack[at:min(at+32, len(want.MsgPack))], v)
	}
}

// TestWriteState_ReadsBackAsTFTypesValue: for random values of both
// schemas' types with maps of several keys, whose bytes differ from
// tftypes' in key order only, the writer's bytes read back as tftypes'
// bytes do (not always as the value written: tftypes writes -0 as 0).
func TestWriteState_ReadsBackAsTFTypesValue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []tftypes.Type{provider.PDPipelineDataSourceType(), provider.PDPipelineResourceType()} {
		for range 200 {
			checkReadsBackAsTFTypes(t, typ, randomValue(r, typ, false))
		}
	}
}

// checkReadsBackAsTFTypes fails t unless the writer's bytes for v read
// back as tftypes' bytes do.
func checkReadsBackAsTFTypes(t *testing.T, typ tftypes.Type, v tftypes.Value) {
	t.Helper()
	got, want := bothEncodings(t, typ, v)
	back, err := got.Unmarshal(typ)
	if err != nil {
		t.Fatalf("the writer's bytes do not read back: %v\nvalue %v", err, v)
	}
	wantBack, err := want.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(wantBack) {
		diffs, _ := back.Diff(wantBack)
		t.Fatalf("reads back other than tftypes' bytes: %v", diffs)
	}
}

// FuzzWriteState draws values as the tests above do, from seeds the
// fuzzer picks: the writer's bytes are tftypes' when every map has at
// most one key, and read back as the value otherwise.
func FuzzWriteState(f *testing.F) {
	f.Add(uint64(1), uint64(2), true)
	f.Add(uint64(3), uint64(4), false)
	f.Fuzz(func(t *testing.T, seed1, seed2 uint64, oneKeyMaps bool) {
		r := rand.New(rand.NewPCG(seed1, seed2))
		typ := provider.PDPipelineResourceType()
		if r.IntN(2) == 0 {
			typ = provider.PDPipelineDataSourceType()
		}
		v := randomValue(r, typ, oneKeyMaps)
		if oneKeyMaps {
			checkSameBytesAsTFTypes(t, typ, v)
		} else {
			checkReadsBackAsTFTypes(t, typ, v)
		}
	})
}

// TestWriteState_MapsInKeyOrder: a map of several keys reads back as the
// same value and is written the same way every time, its keys in order.
func TestWriteState_MapsInKeyOrder(t *testing.T) {
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"env": tftypes.Map{ElementType: tftypes.String}}}
	env := map[string]tftypes.Value{}
	for _, k := range []string{"ZED", "ALPHA", "MIDDLE", "BETA", "OMEGA", "GAMMA"} {
		env[k] = tftypes.NewValue(tftypes.String, strings.ToLower(k))
	}
	v := tftypes.NewValue(typ, map[string]tftypes.Value{"env": tftypes.NewValue(typ.AttributeTypes["env"], env)})
	write := writerFor(typ)
	var first []byte
	for i := range 20 {
		var buf bytes.Buffer
		if err := write(msgpack.NewEncoder(&buf), v); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = bytes.Clone(buf.Bytes())
		} else if !bytes.Equal(buf.Bytes(), first) {
			t.Fatalf("write %d differs from the first:\n %x\n %x", i, buf.Bytes(), first)
		}
	}
	back, err := (&tfprotov6.DynamicValue{MsgPack: first}).Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(v) {
		t.Fatalf("reads back as %v", back)
	}
	keys := []string{"ALPHA", "BETA", "GAMMA", "MIDDLE", "OMEGA", "ZED"}
	at := 0
	for _, k := range keys {
		i := bytes.Index(first[at:], []byte(k))
		if i < 0 {
			t.Fatalf("key %s is not after the keys before it in %q", k, first)
		}
		at += i
	}
}

// TestWriteState_RefusesAnotherType: a value whose type is not the
// schema's is an error, not bytes Terraform would misread.
func TestWriteState_RefusesAnotherType(t *testing.T) {
	typ := provider.PDPipelineDataSourceType()
	if _, err := writeState(typ, tftypes.NewValue(tftypes.String, "x")); err == nil {
		t.Fatal("a string was written as a pipeline's state")
	}
	if _, err := writeState(typ, tftypes.Value{}); err == nil {
		t.Fatal("the zero Value was written as a pipeline's state")
	}
	var d []*tfprotov6.Diagnostic
	if encodeState(typ, tftypes.NewValue(tftypes.String, "x"), &d) != nil || len(d) != 1 {
		t.Fatalf("encodeState of a string: diagnostics %v", d)
	}
}

// BenchmarkEncodeState writes the seed's data source state with the
// writer, with the read writer (numbers as text, as a read answers it) and
// with tftypes.
func BenchmarkEncodeState(b *testing.B) {
	typ := provider.PDPipelineDataSourceType()
	state, diags := provider.ReadPDPipelineDataSource(context.Background(), resourceValue(b, typ, seedWith(nil)))
	if diags.HasError() {
		b.Fatal(diags)
	}
	b.Run("writer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := writeState(typ, state); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read writer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := writeReadState(typ, state); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tftypes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tfprotov6.NewDynamicValue(typ, state); err != nil {
				b.Fatal(err)
			}
		}
	})
}
