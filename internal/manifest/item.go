package manifest

// Item is one unit of synthesis: a manifest line or a whole text file.
type Item struct {
	Source string // input file path, as given (or joined with the directory given); "-" for standard input
	Line   int    // 1-based line number in a JSONL manifest; 0 for whole-file items
	// ID is unique in the run; "" only for error items whose line had no usable id. It defaults to the input's
	// file name without extension, and for a manifest line "-" and the line number ("prompts-3"; "stdin-3" for
	// standard input), so that the items of two inputs never share a default id.
	ID     string
	Text   string
	Out    string // requested output path relative to the output dir, "/"-separated ("" = "<id>.wav")
	Voice  string // "" = default; a path as written in the manifest (relative to the manifest's folder)
	Format string // requested audio format, lower case ("" = from Out's extension, else the run's default)
	// Speaker is "" for the default; a number from the manifest is kept as its
	// decimal string, a name as written.
	Speaker string
	// LengthScale, NoiseScale and NoiseW override the voice's defaults; nil keeps them.
	LengthScale, NoiseScale, NoiseW *float32
	// Warnings are non-fatal problems, e.g. unknown fields. Unlike Err they
	// do not repeat the line number: report them with Source and Line.
	Warnings []string
	// Err is non-nil when the item must not be synthesised; its message names
	// every problem found. Like Warnings it does not repeat the line number:
	// report it with Source and Line. Such items are still yielded so that
	// they can be reported and recorded.
	Err error
}

// OutPath returns the output path relative to the output dir: Out, or
// "<ID>.wav" when Out is empty (the batch gives such an item its format's
// extension). For an item without Err it is always a valid relative path.
func (it Item) OutPath() string {
	if it.Out != "" {
		return it.Out
	}
	return it.ID + ".wav"
}
