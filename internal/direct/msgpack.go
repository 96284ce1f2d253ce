package direct

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/omnipd/terraform-provider-omni/internal/provider"
)

// A valueWriter writes one value of the type it was made for as the
// protocol's msgpack: with the encoder tftypes uses, and in the encoding
// tfprotov6.NewDynamicValue picks for each value, so Terraform reads the
// same value. tftypes finds its way through the type anew for every value
// it writes, sorts each object's attribute names again, and builds each
// value's attribute path in case of an error; a valueWriter is made once
// per schema, with the names sorted and each attribute's writer chosen
// (BenchmarkEncodeState compares the two). Map keys are written sorted,
// where tftypes writes them in Go's map order: the same value, in the same
// bytes every time, maps inside a dynamic value excepted (tftypes writes
// those).
type valueWriter func(enc *msgpack.Encoder, v tftypes.Value) error

// stateWriters are the writers of the two schemas' types, made on first use.
var stateWriters = sync.OnceValue(func() struct{ dataSource, resource valueWriter } {
	return struct{ dataSource, resource valueWriter }{
		dataSource: writerFor(provider.PDPipelineDataSourceType()),
		resource:   writerFor(provider.PDPipelineResourceType()),
	}
})

// writeState encodes a state v of one of the schemas' types, typ, as a
// protocol value; any other type is encoded by tftypes.
func writeState(typ tftypes.Type, v tftypes.Value) (tfprotov6.DynamicValue, error) {
	var write valueWriter
	switch {
	case typ.Equal(provider.PDPipelineDataSourceType()):
		write = stateWriters().dataSource
	case typ.Equal(provider.PDPipelineResourceType()):
		write = stateWriters().resource
	default:
		return tfprotov6.NewDynamicValue(typ, v)
	}
	if v.Type() == nil || !v.Type().Equal(typ) { // nil: the zero Value, which has no type
		return tfprotov6.DynamicValue{}, fmt.Errorf("a value of type %s is not a %s", v.Type(), typ)
	}
	var buf bytes.Buffer
	buf.Grow(16 << 10) // a pipeline's state, so the buffer seldom regrows
	if err := write(msgpack.NewEncoder(&buf), v); err != nil {
		return tfprotov6.DynamicValue{}, err
	}
	return tfprotov6.DynamicValue{MsgPack: buf.Bytes()}, nil
}

// unknownBytes is how the protocol writes an unknown value, whatever its type.
var unknownBytes = sync.OnceValue(func() msgpack.RawMessage {
	dv, err := tfprotov6.NewDynamicValue(tftypes.String, tftypes.NewValue(tftypes.String, tftypes.UnknownValue))
	if err != nil {
		panic(err) // a constant value: a failure is a broken dependency, seen by every test
	}
	return dv.MsgPack
})

// writerFor makes the writer of values of type t.
func writerFor(t tftypes.Type) valueWriter {
	if t.Is(tftypes.DynamicPseudoType) {
		// A dynamic value carries its own type; tftypes writes both.
		return func(enc *msgpack.Encoder, v tftypes.Value) error {
			dv, err := tfprotov6.NewDynamicValue(tftypes.DynamicPseudoType, v)
			if err != nil {
				return err
			}
			return enc.Encode(msgpack.RawMessage(dv.MsgPack))
		}
	}
	known := knownWriterFor(t)
	return func(enc *msgpack.Encoder, v tftypes.Value) error {
		switch {
		case !v.IsKnown():
			return enc.Encode(unknownBytes())
		case v.IsNull():
			return enc.EncodeNil()
		}
		return known(enc, v)
	}
}

// knownWriterFor makes the writer of the known, non-null values of type t.
func knownWriterFor(t tftypes.Type) valueWriter {
	switch t := t.(type) {
	case tftypes.List:
		return sequenceWriter(writerFor(t.ElementType))
	case tftypes.Set:
		return sequenceWriter(writerFor(t.ElementType))
	case tftypes.Map:
		return mapWriter(writerFor(t.ElementType))
	case tftypes.Tuple:
		return tupleWriter(t.ElementTypes)
	case tftypes.Object:
		return objectWriter(t.AttributeTypes)
	}
	switch {
	case t.Is(tftypes.String):
		return func(enc *msgpack.Encoder, v tftypes.Value) error {
			var s string
			if err := v.As(&s); err != nil {
				return err
			}
			return enc.EncodeString(s)
		}
	case t.Is(tftypes.Number):
		return writeNumber
	case t.Is(tftypes.Bool):
		return func(enc *msgpack.Encoder, v tftypes.Value) error {
			var b bool
			if err := v.As(&b); err != nil {
				return err
			}
			return enc.EncodeBool(b)
		}
	}
	return func(*msgpack.Encoder, tftypes.Value) error { return fmt.Errorf("unknown type %s", t) }
}

// writeNumber writes a number as tftypes does: an integer that fits an
// int64 as an integer, a fraction a float64 holds exactly as a float64,
// and the rest as decimal text, integers past int64 too even when a
// float64 holds them (1e300), which is why IsInt is asked first.
func writeNumber(enc *msgpack.Encoder, v tftypes.Value) error {
	var n big.Float
	if err := v.As(&n); err != nil {
		return err
	}
	switch {
	case n.IsInf():
		return enc.EncodeFloat64(math.Inf(n.Sign()))
	case n.IsInt():
		if i, acc := n.Int64(); acc == big.Exact {
			return enc.EncodeInt(i)
		}
	default:
		if f, acc := n.Float64(); acc == big.Exact {
			return enc.EncodeFloat64(f)
		}
	}
	return enc.EncodeString(n.Text('f', -1))
}

func sequenceWriter(elem valueWriter) valueWriter {
	return func(enc *msgpack.Encoder, v tftypes.Value) error {
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return err
		}
		if err := enc.EncodeArrayLen(len(elems)); err != nil {
			return err
		}
		for _, e := range elems {
			if err := elem(enc, e); err != nil {
				return err
			}
		}
		return nil
	}
}

func tupleWriter(types []tftypes.Type) valueWriter {
	writers := make([]valueWriter, len(types))
	for i, t := range types {
		writers[i] = writerFor(t)
	}
	return func(enc *msgpack.Encoder, v tftypes.Value) error {
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return err
		}
		if len(elems) != len(writers) {
			return fmt.Errorf("a tuple of %d elements where its type has %d", len(elems), len(writers))
		}
		if err := enc.EncodeArrayLen(len(elems)); err != nil {
			return err
		}
		for i, e := range elems {
			if err := writers[i](enc, e); err != nil {
				return err
			}
		}
		return nil
	}
}

func mapWriter(elem valueWriter) valueWriter {
	return func(enc *msgpack.Encoder, v tftypes.Value) error {
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			return err
		}
		if err := enc.EncodeMapLen(len(elems)); err != nil {
			return err
		}
		keys := make([]string, 0, len(elems))
		for k := range elems {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := enc.EncodeString(k); err != nil {
				return err
			}
			if err := elem(enc, elems[k]); err != nil {
				return err
			}
		}
		return nil
	}
}

// objectWriter writes an object's attributes in the order of their
// names, as tftypes does.
func objectWriter(types map[string]tftypes.Type) valueWriter {
	names := make([]string, 0, len(types))
	for name := range types {
		names = append(names, name)
	}
	slices.Sort(names)
	writers := make([]valueWriter, len(names))
	for i, name := range names {
		writers[i] = writerFor(types[name])
	}
	return func(enc *msgpack.Encoder, v tftypes.Value) error {
		var attrs map[string]tftypes.Value
		if err := v.As(&attrs); err != nil {
			return err
		}
		if err := enc.EncodeMapLen(len(names)); err != nil {
			return err
		}
		for i, name := range names {
			a, ok := attrs[name]
			if !ok {
				return fmt.Errorf("the object has no attribute %q", name)
			}
			if err := enc.EncodeString(name); err != nil {
				return err
			}
			if err := writers[i](enc, a); err != nil {
				return err
			}
		}
		return nil
	}
}
