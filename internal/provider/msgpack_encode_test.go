package provider

import (
	"bytes"
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// checkSameAsTftypes fails unless marshalMsgPack writes v as tftypes writes
// it, byte for byte once tftypes' map order is sorted (sortedMsgPack), and
// the bytes decode to v again.
func checkSameAsTftypes(t *testing.T, typ tftypes.Type, v tftypes.Value) {
	t.Helper()
	got, err := marshalMsgPack(typ, v)
	if err != nil {
		t.Fatalf("marshalMsgPack: %v", err)
	}
	if want := sortedMsgPack(t, v); !bytes.Equal(got, want) {
		at := 0
		for at < min(len(got), len(want)) && got[at] == want[at] {
			at++
		}
		t.Fatalf("bytes differ from tftypes' at offset %d of %d (want %d):\n got  %x\n want %x", at, len(got), len(want), around(got, at), around(want, at))
	}
	back, err := (&tfprotov6.DynamicValue{MsgPack: got}).Unmarshal(typ)
	if err != nil {
		t.Fatalf("the bytes do not decode: %v", err)
	}
	if !back.Equal(v) {
		diffs, err := back.Diff(v)
		if err != nil {
			t.Fatalf("the bytes decode to another value (%v)", err)
		}
		// A number tftypes writes as text (a float64 that is an integer
		// beyond int64, or one of more precision) reads back at 512 bits,
		// another value to Equal; the bytes are tftypes' own, checked
		// above, so only the shape is compared here.
		diffs = slices.DeleteFunc(diffs, func(d tftypes.ValueDiff) bool { return knownNumbers(d.Value1, d.Value2) })
		if len(diffs) == 0 {
			return
		}
		t.Fatalf("the bytes decode to another value: %d differences, the first at %s: %s, want %s", len(diffs), diffs[0].Path, short(diffs[0].Value1), short(diffs[0].Value2))
	}
}

func knownNumbers(a, b *tftypes.Value) bool {
	known := func(v *tftypes.Value) bool {
		return v != nil && v.Type().Is(tftypes.Number) && v.IsKnown() && !v.IsNull()
	}
	return known(a) && known(b)
}

func around(b []byte, at int) []byte { return b[max(0, at-16):min(len(b), at+32)] }

func short(v *tftypes.Value) string {
	if v == nil {
		return "(none)"
	}
	s := v.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// TestMarshalMsgPack_SameAsTftypes: the states the direct path answers a
// read with, for every configuration of the output corpus, and for the
// same configurations with an unknown input.
func TestMarshalMsgPack_SameAsTftypes(t *testing.T) {
	ctx := context.Background()
	for name, set := range outputCorpus(t) {
		t.Run(name, func(t *testing.T) {
			config := dataSourceConfig(t, set)
			state, diags := readPipeline(ctx, config)
			if diags.HasError() {
				t.Fatal(diags)
			}
			checkSameAsTftypes(t, pdPipelineDataSourceType(), state)

			set["api_port"] = tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)
			unknown, diags := readPipeline(ctx, dataSourceConfig(t, set))
			if diags.HasError() {
				t.Fatal(diags)
			}
			checkSameAsTftypes(t, pdPipelineDataSourceType(), unknown)
		})
	}
}

// TestMarshalMsgPack_ResourcePlans: the resource's planned states, for a
// new resource and for one whose API port is not known yet.
func TestMarshalMsgPack_ResourcePlans(t *testing.T) {
	ctx := context.Background()
	typ := pdPipelineResourceType()
	for name, set := range map[string]map[string]tftypes.Value{
		"seed":             {"model": tfStr(seedModel)},
		"api port unknown": {"model": tfStr(seedModel), "api_port": tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)},
		"gpus":             {"model": tfStr(seedModel), "gpus": tfNumber(8)},
	} {
		t.Run(name, func(t *testing.T) {
			config := objectValue(t, typ, set)
			planned, diags := planResource(ctx, config, config, tftypes.NewValue(typ, nil))
			if diags.HasError() {
				t.Fatal(diags)
			}
			checkSameAsTftypes(t, typ, planned)
		})
	}
}

// TestMarshalMsgPack_RandomValues: values of the two schemas' types drawn
// at random, with nulls and unknowns at every level, dynamic values of
// every kind and numbers of every encoding (small and large integers,
// exact and inexact fractions, infinities).
func TestMarshalMsgPack_RandomValues(t *testing.T) {
	for seed := range uint64(300) {
		for _, typ := range []tftypes.Type{pdPipelineDataSourceType(), pdPipelineResourceType()} {
			r := rand.New(rand.NewPCG(seed, 1))
			checkSameAsTftypes(t, typ, randomValue(r, typ, 0))
		}
	}
}

// TestMarshalMsgPack_DynamicMapSorted: a map in a dynamic value (a
// tomap() in engine_args) is written with its keys sorted, the same bytes
// every time, and reads back as the map.
func TestMarshalMsgPack_DynamicMapSorted(t *testing.T) {
	m := tftypes.NewValue(tftypes.Map{ElementType: tftypes.Number}, map[string]tftypes.Value{
		"max_num_seqs": tfNumber(8), "block_size": tfNumber(16), "seed": tfNumber(1),
	})
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"engine_args": tftypes.DynamicPseudoType}}
	v := tftypes.NewValue(obj, map[string]tftypes.Value{"engine_args": m})
	first, err := marshalMsgPack(obj, v)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if again, _ := marshalMsgPack(obj, v); !bytes.Equal(again, first) {
			t.Fatal("the same value encodes to other bytes")
		}
	}
	at := func(key string) int { return bytes.Index(first, []byte(key)) }
	if at("block_size") > at("max_num_seqs") || at("max_num_seqs") > at("seed") {
		t.Errorf("the map's keys are not in sorted order: %q", first)
	}
	back, err := (&tfprotov6.DynamicValue{MsgPack: first}).Unmarshal(obj)
	if err != nil || !back.Equal(v) {
		t.Errorf("reads back as %v (%v), want %v", back, err, v)
	}
	// tftypes writes the keys in Go's map order, which Go varies from
	// one walk to the next: for two keys both orders come up, and the
	// sorted one is ours.
	two := tftypes.NewValue(obj, map[string]tftypes.Value{"engine_args": tftypes.NewValue(tftypes.Map{ElementType: tftypes.Number},
		map[string]tftypes.Value{"seed": tfNumber(1), "block_size": tfNumber(16)})})
	ours, err := marshalMsgPack(obj, two)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if theirs, err := tfprotov6.NewDynamicValue(obj, two); err == nil && bytes.Equal(theirs.MsgPack, ours) {
			return
		}
	}
	t.Error("no encoding of tftypes' in 200 is ours")
}

// TestEncodeState_FallsBackToTftypes: a value that does not fit its type is
// not written by marshalMsgPack; encodeState hands it to tftypes, whose error
// becomes the framework's diagnostic, and a value that fits is written
// without one.
func TestEncodeState_FallsBackToTftypes(t *testing.T) {
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.String}}
	for name, v := range map[string]tftypes.Value{
		"another type":         tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.Number}}, map[string]tftypes.Value{"a": tfNumber(1)}),
		"an attribute missing": tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"b": tftypes.String}}, map[string]tftypes.Value{"b": tfStr("x")}),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := marshalMsgPack(typ, v); err == nil {
				t.Fatal("marshalMsgPack wrote a value that does not fit its type")
			}
			var diags []*tfprotov6.Diagnostic
			if got := encodeState(typ, v, &diags); got != nil {
				t.Errorf("encoded as %x", got.MsgPack)
			}
			_, want := tfprotov6.NewDynamicValue(typ, v)
			if len(diags) != 1 || diags[0].Summary != "Unable to Convert State" || want == nil || !strings.HasSuffix(diags[0].Detail, want.Error()) {
				t.Errorf("diagnostics %+v; want tftypes' error %v", diags, want)
			}
		})
	}
	var diags []*tfprotov6.Diagnostic
	if got := encodeState(typ, tftypes.NewValue(typ, map[string]tftypes.Value{"a": tfStr("x")}), &diags); got == nil || len(diags) != 0 {
		t.Errorf("a value that fits: %v, %v", got, diags)
	}
}

// TestEncodeState_WritesSortedKeys: a value that fits is written by
// marshalMsgPack, a map's keys in sorted order, every time; tftypes writes
// them in Go's map order, which varies from one encoding to the next.
func TestEncodeState_WritesSortedKeys(t *testing.T) {
	elems := map[string]tftypes.Value{}
	for _, k := range []string{"f", "a", "e", "b", "d", "c"} {
		elems[k] = tfStr(k)
	}
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"env": tftypes.Map{ElementType: tftypes.String}}}
	v := tftypes.NewValue(typ, map[string]tftypes.Value{"env": tftypes.NewValue(typ.AttributeTypes["env"], elems)})
	want, err := marshalMsgPack(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		var diags []*tfprotov6.Diagnostic
		if got := encodeState(typ, v, &diags); got == nil || len(diags) != 0 || !bytes.Equal(got.MsgPack, want) {
			t.Fatalf("encodeState wrote other bytes than marshalMsgPack (%v)", diags)
		}
	}
}

func FuzzMarshalMsgPack(f *testing.F) {
	f.Add(uint64(0), uint64(0))
	f.Add(uint64(7), uint64(99))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		r := rand.New(rand.NewPCG(a, b))
		typ := pdPipelineDataSourceType()
		if a%2 == 1 {
			typ = pdPipelineResourceType()
		}
		checkSameAsTftypes(t, typ, randomValue(r, typ, 0))
	})
}

// randomValue is a value of typ: null or unknown now and then, a dynamic
// value of a random type where typ is dynamic.
func randomValue(r *rand.Rand, typ tftypes.Type, depth int) tftypes.Value {
	switch r.IntN(12) {
	case 0:
		return tftypes.NewValue(typ, nil)
	case 1:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	}
	if typ.Is(tftypes.DynamicPseudoType) {
		return randomValue(r, randomType(r, depth), depth)
	}
	switch t := typ.(type) {
	case tftypes.Object:
		attrs := make(map[string]tftypes.Value, len(t.AttributeTypes))
		for name, at := range t.AttributeTypes {
			attrs[name] = randomValue(r, at, depth+1)
		}
		return tftypes.NewValue(t, attrs)
	case tftypes.List:
		return tftypes.NewValue(t, randomElements(r, t.ElementType, depth))
	case tftypes.Set:
		return tftypes.NewValue(t, randomSetElements(r, t.ElementType, depth))
	case tftypes.Tuple:
		elems := make([]tftypes.Value, len(t.ElementTypes))
		for i, et := range t.ElementTypes {
			elems[i] = randomValue(r, et, depth+1)
		}
		return tftypes.NewValue(t, elems)
	case tftypes.Map:
		elems := map[string]tftypes.Value{}
		for i := range r.IntN(5) {
			elems["k"+strconv.Itoa(i*7%5)+strconv.Itoa(r.IntN(3))] = randomValue(r, t.ElementType, depth+1)
		}
		return tftypes.NewValue(t, elems)
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, []string{"", "x", "Qwen/Qwen3-Omni-30B-A3B-Instruct", string(make([]byte, 40)), string(make([]byte, 300)), string(make([]byte, 70000)), "ü\n\"'"}[r.IntN(7)])
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, r.IntN(2) == 1)
	case typ.Is(tftypes.Number):
		return tftypes.NewValue(typ, randomNumber(r))
	}
	panic("randomValue: no case for " + typ.String())
}

func randomElements(r *rand.Rand, elem tftypes.Type, depth int) []tftypes.Value {
	if depth > 4 {
		return nil
	}
	elems := make([]tftypes.Value, r.IntN(4))
	for i := range elems {
		elems[i] = randomValue(r, elem, depth+1)
	}
	return elems
}

// randomSetElements are distinct known values, as a set holds them.
func randomSetElements(r *rand.Rand, elem tftypes.Type, depth int) []tftypes.Value {
	var elems []tftypes.Value
	for range r.IntN(4) {
		v := randomValue(r, elem, depth+1)
		// A set's elements are known, and keyed by value: a number that
		// reads back as another (see checkSameAsTftypes) is left out.
		dup := !v.IsFullyKnown() || !readsBackExactly(v)
		for _, e := range elems {
			dup = dup || e.Equal(v)
		}
		if !dup {
			elems = append(elems, v)
		}
	}
	return elems
}

func readsBackExactly(v tftypes.Value) bool {
	var n big.Float
	if !v.Type().Is(tftypes.Number) || v.IsNull() || v.As(&n) != nil {
		return true
	}
	_, exact := n.Int64()
	return exact == big.Exact || (!n.IsInt() && !n.IsInf())
}

func randomType(r *rand.Rand, depth int) tftypes.Type {
	primitives := []tftypes.Type{tftypes.String, tftypes.Number, tftypes.Bool}
	if depth > 3 {
		return primitives[r.IntN(3)]
	}
	switch r.IntN(7) {
	case 0:
		return tftypes.List{ElementType: randomType(r, depth+1)}
	case 1:
		// Not a map: tftypes writes a dynamic value's map keys in Go's
		// map order, so its bytes are not a reference
		// (TestMarshalMsgPack_DynamicMapSorted).
		return tftypes.List{ElementType: primitives[r.IntN(3)]}
	case 2:
		return tftypes.Set{ElementType: primitives[r.IntN(3)]}
	case 3:
		types := map[string]tftypes.Type{}
		for i := range r.IntN(4) {
			types["a"+strconv.Itoa(i)] = randomType(r, depth+1)
		}
		return tftypes.Object{AttributeTypes: types}
	case 4:
		types := make([]tftypes.Type, r.IntN(3))
		for i := range types {
			types[i] = randomType(r, depth+1)
		}
		return tftypes.Tuple{ElementTypes: types}
	}
	return primitives[r.IntN(3)]
}

func randomNumber(r *rand.Rand) *big.Float {
	third := new(big.Float).SetPrec(512).Quo(big.NewFloat(1).SetPrec(512), big.NewFloat(3))
	huge, _ := new(big.Float).SetString("1e400")
	choices := []*big.Float{
		big.NewFloat(0), big.NewFloat(1), big.NewFloat(-1), big.NewFloat(-33), big.NewFloat(127), big.NewFloat(128),
		big.NewFloat(255), big.NewFloat(65536), big.NewFloat(-40000), big.NewFloat(1 << 40), big.NewFloat(-(1 << 40)),
		big.NewFloat(0.5), big.NewFloat(0.88), big.NewFloat(-2.25), big.NewFloat(math.MaxFloat64),
		big.NewFloat(math.Inf(1)), big.NewFloat(math.Inf(-1)), third, huge,
		new(big.Float).SetInt64(math.MinInt64), new(big.Float).SetUint64(math.MaxUint64),
	}
	return choices[r.IntN(len(choices))]
}
