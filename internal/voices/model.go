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

// Signature is what a model takes and gives: the names of its graph's inputs and outputs.
type Signature struct {
	Inputs, Outputs []string
}

// The ONNX fields CheckModel reads, numbered as the ONNX schema (through gonnx's generated code) says.
var (
	modelGraph   = fieldNumber(&onnx.ModelProto{}, "graph")
	modelOpsets  = fieldNumber(&onnx.ModelProto{}, "opset_import")
	graphInputs  = fieldNumber(&onnx.GraphProto{}, "input")
	graphOutputs = fieldNumber(&onnx.GraphProto{}, "output")
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
	err = r.fields(info.Size(), func(num protowire.Number, typ protowire.Type, end int64) error {
		switch {
		case num == modelGraph && typ == protowire.BytesType:
			graphs++
			return r.fields(end, func(num protowire.Number, typ protowire.Type, end int64) error {
				if (num != graphInputs && num != graphOutputs) || typ != protowire.BytesType {
					return r.skip(end)
				}
				name, err := r.valueName(end)
				if num == graphInputs {
					sig.Inputs = append(sig.Inputs, name)
				} else {
					sig.Outputs = append(sig.Outputs, name)
				}
				return err
			})
		case num == modelOpsets:
			opsets++
		}
		return r.skip(end)
	})
	switch {
	case err != nil:
		return Signature{}, fmt.Errorf("%s is not a whole ONNX model (truncated, or another kind of file): %w", path, err)
	case graphs != 1 || opsets == 0:
		return Signature{}, fmt.Errorf("%s is not a whole ONNX model (truncated, or another kind of file): it has %d graphs and %d opset imports", path, graphs, opsets)
	}
	return sig, nil
}

// CheckPiper says how sig differs from a Piper voice model's (inputs input, input_lengths, scales, and sid exactly
// when the voice has several speakers; output output), or nil.
func CheckPiper(sig Signature, speakers int) error {
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
	f   *os.File
	br  *bufio.Reader
	pos int64
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
			if _, err := r.varint(); err != nil {
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

// valueName decodes the ValueInfoProto that ends at end and returns its name.
func (r *fieldReader) valueName(end int64) (string, error) {
	n := end - r.pos
	if n > maxValueInfo {
		return "", fmt.Errorf("an input or output description of %d bytes at byte %d", n, r.pos)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r.br, buf); err != nil {
		return "", unexpected(err)
	}
	r.pos = end
	var v onnx.ValueInfoProto
	if err := proto.Unmarshal(buf, &v); err != nil {
		return "", fmt.Errorf("an input or output description at byte %d: %w", end-n, err)
	}
	return v.GetName(), nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
