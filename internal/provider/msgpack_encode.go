package provider

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"
)

// marshalMsgPack encodes v as the protocol's msgpack, as
// tftypes.Value.MarshalMsgPack does, for the direct path's responses.
//
// It makes the same encoder calls in the same order, with one difference:
// a map's keys are written sorted, where tftypes writes them in Go's map
// order, so the same state is the same bytes every time. What it saves is
// tftypes' bookkeeping around each value: a new attribute path for every
// value, a new String value for every object key, and each object's keys
// sorted into a new slice (here they are sorted on the stack), on every
// read of every instance (PERFORMANCE.md has the measured share). TestMarshalMsgPack_SameAsTftypes holds the two to the
// same bytes.
func marshalMsgPack(typ tftypes.Type, v tftypes.Value) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(32 << 10) // room for one instance's state, so the buffer seldom regrows
	enc := msgpack.NewEncoder(&buf)
	if err := encodeValue(enc, typ, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errNotEncodable is a value that does not fit the type it is written as:
// another type, an object without one of the type's attributes, a tuple of
// another length. encodeState then hands it to tftypes, which reports it.
var errNotEncodable = errors.New("the value does not hold what its type says")

// msgpackUnknown is how the protocol writes an unknown value: the
// extension type 0 with one zero byte, as go-cty and tftypes write it.
type msgpackUnknown struct{}

func (msgpackUnknown) MarshalMsgpack() ([]byte, error) { return []byte{0xd4, 0, 0}, nil }

func encodeValue(enc *msgpack.Encoder, typ tftypes.Type, v tftypes.Value) error {
	if typ.Is(tftypes.DynamicPseudoType) && !v.Type().Is(tftypes.DynamicPseudoType) {
		// A dynamic value carries its type: [type JSON, value].
		typeJSON, err := v.Type().MarshalJSON() //nolint:staticcheck // the protocol's own encoding of a type
		if err != nil {
			return err
		}
		if err := enc.EncodeArrayLen(2); err != nil {
			return err
		}
		if err := enc.EncodeBytes(typeJSON); err != nil {
			return err
		}
		return encodeValue(enc, v.Type(), v)
	}
	if !v.IsKnown() {
		return enc.Encode(msgpackUnknown{})
	}
	if v.IsNull() {
		return enc.EncodeNil()
	}
	switch t := typ.(type) {
	case tftypes.Object:
		return encodeObject(enc, t, v)
	case tftypes.List:
		return encodeElements(enc, t.ElementType, v)
	case tftypes.Set:
		return encodeElements(enc, t.ElementType, v)
	case tftypes.Map:
		return encodeMap(enc, t, v)
	case tftypes.Tuple:
		return encodeTuple(enc, t, v)
	}
	switch {
	case typ.Is(tftypes.String):
		var s string
		if v.As(&s) != nil {
			return errNotEncodable
		}
		return enc.EncodeString(s)
	case typ.Is(tftypes.Number):
		var n big.Float
		if v.As(&n) != nil {
			return errNotEncodable
		}
		return encodeNumber(enc, &n)
	case typ.Is(tftypes.Bool):
		var b bool
		if v.As(&b) != nil {
			return errNotEncodable
		}
		return enc.EncodeBool(b)
	}
	return errNotEncodable
}

// encodeNumber writes, as tftypes does, a number an int64 holds as the
// shortest msgpack integer, a fraction a float64 holds exactly as a float64,
// infinities as float64, and any other number (a larger integer, a fraction
// of more precision) as its decimal text.
func encodeNumber(enc *msgpack.Encoder, n *big.Float) error {
	if n.IsInf() {
		return enc.EncodeFloat64(math.Inf(n.Sign()))
	}
	if i, acc := n.Int64(); acc == big.Exact {
		return enc.EncodeInt(i)
	}
	if f, acc := n.Float64(); acc == big.Exact && !n.IsInt() {
		return enc.EncodeFloat64(f)
	}
	return enc.EncodeString(n.Text('f', -1))
}

func encodeObject(enc *msgpack.Encoder, t tftypes.Object, v tftypes.Value) error {
	var attrs map[string]tftypes.Value
	if v.As(&attrs) != nil {
		return errNotEncodable
	}
	var room [64]string
	names := sortedKeys(room[:0], t.AttributeTypes)
	if err := enc.EncodeMapLen(len(names)); err != nil {
		return err
	}
	for _, name := range names {
		av, ok := attrs[name]
		if !ok {
			return errNotEncodable
		}
		if err := enc.EncodeString(name); err != nil {
			return err
		}
		if err := encodeValue(enc, t.AttributeTypes[name], av); err != nil {
			return err
		}
	}
	return nil
}

func encodeElements(enc *msgpack.Encoder, elem tftypes.Type, v tftypes.Value) error {
	var elems []tftypes.Value
	if v.As(&elems) != nil {
		return errNotEncodable
	}
	if err := enc.EncodeArrayLen(len(elems)); err != nil {
		return err
	}
	for _, e := range elems {
		if err := encodeValue(enc, elem, e); err != nil {
			return err
		}
	}
	return nil
}

func encodeTuple(enc *msgpack.Encoder, t tftypes.Tuple, v tftypes.Value) error {
	var elems []tftypes.Value
	if v.As(&elems) != nil || len(elems) != len(t.ElementTypes) {
		return errNotEncodable
	}
	if err := enc.EncodeArrayLen(len(elems)); err != nil {
		return err
	}
	for i, e := range elems {
		if err := encodeValue(enc, t.ElementTypes[i], e); err != nil {
			return err
		}
	}
	return nil
}

func encodeMap(enc *msgpack.Encoder, t tftypes.Map, v tftypes.Value) error {
	var elems map[string]tftypes.Value
	if v.As(&elems) != nil {
		return errNotEncodable
	}
	var room [64]string
	keys := sortedKeys(room[:0], elems)
	if err := enc.EncodeMapLen(len(keys)); err != nil {
		return err
	}
	for _, k := range keys {
		if err := enc.EncodeString(k); err != nil {
			return err
		}
		if err := encodeValue(enc, t.ElementType, elems[k]); err != nil {
			return err
		}
	}
	return nil
}

// sortedKeys appends m's keys to dst, sorted. The callers pass a slice of
// an array on their stack, which holds every object of these schemas.
func sortedKeys[V any](dst []string, m map[string]V) []string {
	for k := range m {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}
