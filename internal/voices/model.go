package voices

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The inputs and output of a Piper voice model, as Piper's exporter names them; multi-speaker models take a speaker
// id, "sid", too.
var (
	piperInputs  = []string{"input", "input_lengths", "scales"}
	piperSpeaker = "sid"
	piperOutput  = "output"
)

// Signature is what a model takes and gives: the names of its graph's inputs and outputs, and how many phoneme
// ids its embedding table has rows for (Symbols; 0 where it was not found).
type Signature struct {
	Inputs, Outputs []string
	Symbols         int64
}

// The ONNX fields CheckModel reads, numbered as the ONNX schema (through gonnx's generated code) says.
var (
	modelGraph   = fieldNumber(&onnx.ModelProto{}, "graph")
	modelOpsets  = fieldNumber(&onnx.ModelProto{}, "opset_import")
	graphInputs  = fieldNumber(&onnx.GraphProto{}, "input")
	graphOutputs = fieldNumber(&onnx.GraphProto{}, "output")
	graphNodes   = fieldNumber(&onnx.GraphProto{}, "node")
	graphInits   = fieldNumber(&onnx.GraphProto{}, "initializer")
	tensorDims   = fieldNumber(&onnx.TensorProto{}, "dims")
	tensorName   = fieldNumber(&onnx.TensorProto{}, "name")
)

func fieldNumber(m proto.Message, name string) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name)).Number()
}

// maxValueInfo bounds one input or output description; a real one is a few dozen bytes.
const maxValueInfo = 1 << 20

// ReadSignature reads the inputs and outputs of the ONNX model at path without loading it: it walks the protobuf
// encoding field by field, seeking past the weights, and decodes only the graph's input and output descriptions
// (gonnx's ValueInfoProto). Every length is checked against the file's size, so a truncated file, or one that is not
// an ONNX model at all, is an error.
func ReadSignature(path string) (Signature, error) {
	f, err := os.Open(path)
	if err != nil {
		return Signature{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Signature{}, err
	}
	if !info.Mode().IsRegular() {
		return Signature{}, fmt.Errorf("%s is not a regular file", path)
	}
	r := &fieldReader{f: f, br: bufio.NewReaderSize(f, 64<<10)}
	var sig Signature
	graphs, opsets := 0, 0
	var embedding string       // the table the phoneme ids index: the data of the Gather that reads "input"
	rows := map[string]int64{} // each initializer's first dimension
	err = r.fields(info.Size(), func(num protowire.Number, typ protowire.Type, end int64) error {
		switch {
		case num == modelGraph && typ == protowire.BytesType:
			graphs++
			return r.fields(end, func(num protowire.Number, typ protowire.Type, end int64) error {
				switch {
				case typ != protowire.BytesType:
					return r.skip(end)
				case num == graphInputs || num == graphOutputs:
					var v onnx.ValueInfoProto
					err := r.message(end, &v)
					if num == graphInputs {
						sig.Inputs = append(sig.Inputs, v.GetName())
					} else {
						sig.Outputs = append(sig.Outputs, v.GetName())
					}
					return err
				case num == graphNodes && end-r.pos <= maxValueInfo: // a Constant may hold a large tensor: skipped
					var n onnx.NodeProto
					err := r.message(end, &n)
					if in := n.GetInput(); n.GetOpType() == "Gather" && len(in) == 2 && in[1] == piperInputs[0] {
						embedding = in[0]
					}
					return err
				case num == graphInits:
					name, first, err := r.tensorHead(end)
					rows[name] = first
					return err
				}
				return r.skip(end)
			})
		case num == modelOpsets:
			opsets++
		}
		return r.skip(end)
	})
	sig.Symbols = rows[embedding]
	switch {
	case err != nil:
		return Signature{}, fmt.Errorf("%s is not a whole ONNX model (truncated, or another kind of file): %w", path, err)
	case graphs != 1 || opsets == 0:
		return Signature{}, fmt.Errorf("%s is not a whole ONNX model (truncated, or another kind of file): it has %d graphs and %d opset imports", path, graphs, opsets)
	}
	return sig, nil
}

// CheckPiper says how sig differs from the model of a Piper voice of config cfg (inputs input, input_lengths,
// scales, and sid exactly when the voice has several speakers; output output; an embedding with a row for every
// phoneme id of the map, where the model shows its table), or nil.
func CheckPiper(sig Signature, cfg *Config) error {
	if max := cfg.MaxPhonemeID(); sig.Symbols > 0 && max >= sig.Symbols {
		// else it loads and speaks until a sentence has that phoneme, and then fails with ORT's index error
		return fmt.Errorf("its config's phoneme_id_map uses id %d, but the model has ids 0..%d only: the two "+
			"files are not of one voice", max, sig.Symbols-1)
	}
	speakers := cfg.NumSpeakers
	want := slices.Clone(piperInputs)
	if speakers > 1 {
		want = append(want, piperSpeaker)
	}
	var problems []error
	for _, in := range want {
		if !slices.Contains(sig.Inputs, in) {
			problems = append(problems, fmt.Errorf("it has no input %q", in))
		}
	}
	for _, in := range sig.Inputs {
		if !slices.Contains(want, in) {
			problems = append(problems, fmt.Errorf("it has an input %q that a Piper voice with %d speaker(s) does not", in, speakers))
		}
	}
	if !slices.Contains(sig.Outputs, piperOutput) {
		problems = append(problems, fmt.Errorf("it has no output %q", piperOutput))
	}
	if len(problems) > 0 {
		return fmt.Errorf("not a Piper voice model (inputs %q, outputs %q): %w", sig.Inputs, sig.Outputs, errors.Join(problems...))
	}
	return nil
}

// fieldReader walks a protobuf encoding in a file, knowing where it is.
type fieldReader struct {
	f     *os.File
	br    *bufio.Reader
	pos   int64
	value uint64 // a varint field's value, while fields calls fn for it
}

// fields calls fn for each field up to end, with the field's own end; fn must leave the reader there.
func (r *fieldReader) fields(end int64, fn func(num protowire.Number, typ protowire.Type, end int64) error) error {
	for r.pos < end {
		start := r.pos
		tag, err := r.varint()
		if err != nil {
			return err
		}
		num, typ := protowire.DecodeTag(tag)
		if !num.IsValid() {
			return fmt.Errorf("invalid field number %d at byte %d", num, start)
		}
		fieldEnd := r.pos
		switch typ {
		case protowire.VarintType:
			if r.value, err = r.varint(); err != nil {
				return err
			}
			fieldEnd = r.pos
		case protowire.Fixed32Type:
			fieldEnd += 4
		case protowire.Fixed64Type:
			fieldEnd += 8
		case protowire.BytesType:
			n, err := r.varint()
			if err != nil {
				return err
			}
			fieldEnd = r.pos + int64(n)
			if n > uint64(end) || fieldEnd < r.pos {
				fieldEnd = end + 1 // caught below
			}
		default:
			return fmt.Errorf("field %d at byte %d has wire type %d, which ONNX does not use", num, start, typ)
		}
		if fieldEnd > end {
			return fmt.Errorf("field %d at byte %d runs past the end of what holds it (byte %d)", num, start, end)
		}
		if err := fn(num, typ, fieldEnd); err != nil {
			return err
		}
		if r.pos != fieldEnd {
			return fmt.Errorf("field %d at byte %d was not read to its end", num, start)
		}
	}
	if r.pos != end {
		return fmt.Errorf("a field runs past byte %d", end)
	}
	return nil
}

func (r *fieldReader) varint() (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := r.br.ReadByte()
		if err != nil {
			return 0, unexpected(err)
		}
		r.pos++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("a varint at byte %d is too long", r.pos)
}

// skip moves to end, seeking past what is not buffered (a model's weights are most of it).
func (r *fieldReader) skip(end int64) error {
	n := end - r.pos
	if n <= int64(r.br.Buffered()) {
		r.br.Discard(int(n))
		r.pos = end
		return nil
	}
	if _, err := r.f.Seek(end, io.SeekStart); err != nil {
		return err
	}
	r.br.Reset(r.f)
	r.pos = end
	return nil
}

// message decodes the small message (an input's description, a node) that ends at end into m.
func (r *fieldReader) message(end int64, m proto.Message) error {
	start := r.pos
	buf, err := r.bytes(end)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(buf, m); err != nil {
		return fmt.Errorf("a graph's %s at byte %d: %w", m.ProtoReflect().Descriptor().Name(), start, err)
	}
	return nil
}

// bytes reads what is left up to end, at most maxValueInfo of it.
func (r *fieldReader) bytes(end int64) ([]byte, error) {
	n := end - r.pos
	if n > maxValueInfo {
		return nil, fmt.Errorf("a field of %d bytes at byte %d where a few dozen are expected", n, r.pos)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r.br, buf); err != nil {
		return nil, unexpected(err)
	}
	r.pos = end
	return buf, nil
}

// tensorHead reads the name and first dimension (0 if none) of the TensorProto that ends at end, seeking past its
// data.
func (r *fieldReader) tensorHead(end int64) (name string, first int64, err error) {
	err = r.fields(end, func(num protowire.Number, typ protowire.Type, end int64) error {
		switch {
		case num == tensorName && typ == protowire.BytesType:
			b, err := r.bytes(end)
			name = string(b)
			return err
		case num == tensorDims && typ == protowire.VarintType && first == 0: // ONNX's proto2 does not pack them
			first = int64(r.value)
			return nil
		case num == tensorDims && typ == protowire.BytesType && first == 0: // packed
			b, err := r.bytes(end)
			if v, n := protowire.ConsumeVarint(b); n > 0 {
				first = int64(v)
			}
			return err
		}
		return r.skip(end)
	})
	return name, first, err
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
