package direct

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
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

// stateWriters are the writers of the two schemas' types, made on first
// use, and the writers of what a read returns (writeReadState).
var stateWriters = sync.OnceValue(func() struct{ dataSource, resource, readDataSource, readResource valueWriter } {
	return struct{ dataSource, resource, readDataSource, readResource valueWriter }{
		dataSource:     writerFor(provider.PDPipelineDataSourceType()),
		resource:       writerFor(provider.PDPipelineResourceType()),
		readDataSource: numbersAsText.writerFor(provider.PDPipelineDataSourceType()),
		readResource:   numbersAsText.writerFor(provider.PDPipelineResourceType()),
	}
})

// writeState encodes a state v of one of the schemas' types, typ, as a
// protocol value; any other type is encoded by tftypes.
func writeState(typ tftypes.Type, v tftypes.Value) (tfprotov6.DynamicValue, error) {
	w := stateWriters()
	return writeWith(w.dataSource, w.resource, typ, v)
}

// writeReadState encodes what a read returns, the resource's refreshed
// state or the data source's, with every number as its decimal text
// (numbersAsText). A refresh-only plan is applyable, and
// `plan -refresh-only -detailed-exitcode` exits 2, when the refreshed
// state or the root module's outputs are not reflect.DeepEqual to those
// before the refresh (hashicorp/terraform
// internal/terraform/context_plan.go@35645b8f:833, v1.11.4;
// internal/states/state_equal.go@35645b8f:63 and :98), and that compares
// the decoded values each object keeps
// (internal/states/instance_object.go@35645b8f:143) and each output's
// value. A number sent as an integer or a float64 decodes to another
// big.Float (precision 64 or 53) than the same number read from the state
// file's JSON (512, cty.ParseNumberVal), so an unchanged pipeline, or an
// output passing on a data source's port, counted as drift while the plan
// printed "No changes". Text is decoded with ParseNumberVal, as the JSON
// is: the same value, bit for bit.
func writeReadState(typ tftypes.Type, v tftypes.Value) (tfprotov6.DynamicValue, error) {
	w := stateWriters()
	return writeWith(w.readDataSource, w.readResource, typ, v)
}

// writeWith encodes v with the writer of its schema's type, dataSource's
// or resource's; any other type is encoded by tftypes.
func writeWith(dataSource, resource valueWriter, typ tftypes.Type, v tftypes.Value) (tfprotov6.DynamicValue, error) {
	switch {
	case typ.Equal(provider.PDPipelineDataSourceType()):
		return encodeBytes(dataSource, typ, v)
	case typ.Equal(provider.PDPipelineResourceType()):
		return encodeBytes(resource, typ, v)
	}
	return tfprotov6.NewDynamicValue(typ, v)
}

func encodeBytes(write valueWriter, typ tftypes.Type, v tftypes.Value) (tfprotov6.DynamicValue, error) {
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

// encoding says how a writer writes numbers: as tftypes does, or each
// as its decimal text (numbersAsText), which the protocol's msgpack also
// allows for any number (cty's msgpack decoder reads it with
// ParseNumberVal: zclconf/go-cty@v1.18.1 cty/msgpack/unmarshal.go:114).
type encoding struct{ textNumbers bool }

var (
	asTFTypes     = encoding{}
	numbersAsText = encoding{textNumbers: true}
)

// writerFor makes the writer of values of type t, in tftypes' encoding.
func writerFor(t tftypes.Type) valueWriter { return asTFTypes.writerFor(t) }

// writerFor makes the writer of values of type t.
func (e encoding) writerFor(t tftypes.Type) valueWriter {
	if t.Is(tftypes.DynamicPseudoType) {
		if e.textNumbers {
			return e.writeDynamic
		}
		// A dynamic value carries its own type; tftypes writes both.
		return func(enc *msgpack.Encoder, v tftypes.Value) error {
			dv, err := tfprotov6.NewDynamicValue(tftypes.DynamicPseudoType, v)
			if err != nil {
				return err
			}
			return enc.Encode(msgpack.RawMessage(dv.MsgPack))
		}
	}
	known := e.knownWriterFor(t)
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

// writeDynamic writes a value at a dynamic position as tftypes does (its
// type's JSON, then the value, unless the value's own type is dynamic: a
// null or an unknown without a type), with e's numbers. Its writer is made
// for each value, whose type only the value knows.
func (e encoding) writeDynamic(enc *msgpack.Encoder, v tftypes.Value) error {
	if v.Type() == nil || v.Type().Is(tftypes.DynamicPseudoType) {
		if !v.IsKnown() {
			return enc.Encode(unknownBytes())
		}
		return enc.EncodeNil()
	}
	typeJSON, err := typeJSON(v.Type())
	if err != nil {
		return err
	}
	if err := enc.EncodeArrayLen(2); err != nil {
		return err
	}
	if err := enc.EncodeBytes(typeJSON); err != nil {
		return err
	}
	return e.writerFor(v.Type())(enc, v)
}

// typeJSON is the protocol's JSON for a type, as tftypes writes it before
// a value at a dynamic position: read back from tftypes' own encoding of a
// null of that type, since tftypes keeps its type writer to itself.
func typeJSON(t tftypes.Type) ([]byte, error) {
	dv, err := tfprotov6.NewDynamicValue(tftypes.DynamicPseudoType, tftypes.NewValue(t, nil))
	if err != nil {
		return nil, err
	}
	dec := msgpack.NewDecoder(bytes.NewReader(dv.MsgPack))
	if n, err := dec.DecodeArrayLen(); err != nil || n != 2 {
		return nil, fmt.Errorf("tftypes wrote a dynamic %s as %x", t, dv.MsgPack)
	}
	return dec.DecodeBytes()
}

// knownWriterFor makes the writer of the known, non-null values of type t.
func (e encoding) knownWriterFor(t tftypes.Type) valueWriter {
	switch t := t.(type) {
	case tftypes.List:
		return sequenceWriter(e.writerFor(t.ElementType))
	case tftypes.Set:
		return sequenceWriter(e.writerFor(t.ElementType))
	case tftypes.Map:
		return mapWriter(e.writerFor(t.ElementType))
	case tftypes.Tuple:
		return e.tupleWriter(t.ElementTypes)
	case tftypes.Object:
		return e.objectWriter(t.AttributeTypes)
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
		if e.textNumbers {
			return writeNumberText
		}
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

// writeNumberText writes a number as its decimal text, as cty's JSON
// writes it into the state file: the shortest text that reads back as the
// same 512-bit number (cty.ParseNumberVal's precision). The number is
// widened to 512 bits first, which is exact, since the shortest text at a
// float64's 53 bits ("0.1") reads back at 512 bits as another number than
// that float64. An infinity, which has no text, is written as tftypes
// writes it.
func writeNumberText(enc *msgpack.Encoder, v tftypes.Value) error {
	var n big.Float
	if err := v.As(&n); err != nil {
		return err
	}
	if n.IsInf() {
		return enc.EncodeFloat64(math.Inf(n.Sign()))
	}
	if i, acc := n.Int64(); acc == big.Exact {
		// The same text, without a 512-bit conversion: a data source read
		// writes some hundred integers on every plan.
		return enc.EncodeString(strconv.FormatInt(i, 10))
	}
	wide := new(big.Float).SetPrec(ctyPrecision)
	wide.Set(&n)
	return enc.EncodeString(wide.Text('f', -1))
}

// ctyPrecision is the precision cty.ParseNumberVal reads a number's text
// with (zclconf/go-cty@v1.18.1 cty/value_init.go:51).
const ctyPrecision = 512

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

func (e encoding) tupleWriter(types []tftypes.Type) valueWriter {
	writers := make([]valueWriter, len(types))
	for i, t := range types {
		writers[i] = e.writerFor(t)
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
func (e encoding) objectWriter(types map[string]tftypes.Type) valueWriter {
	names := make([]string, 0, len(types))
	for name := range types {
		names = append(names, name)
	}
	slices.Sort(names)
	writers := make([]valueWriter, len(names))
	for i, name := range names {
		writers[i] = e.writerFor(types[name])
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
