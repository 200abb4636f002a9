// Package manifest reads the inputs of a `ttsgen batch` run into validated
// items, each of which remembers where it came from.
//
// These inputs are understood:
//
//   - A JSONL manifest (.jsonl, .json or .ndjson): one JSON object per line,
//     {"id","text","out","voice","speaker","length_scale","noise_scale","noise_w"},
//     of which only "text" is required; "id" defaults to the file's name
//     without extension and the line number ("prompts-3"). It is read line
//     by line (a line ends at "\n", "\r\n" or a lone "\r") with a fixed
//     line limit (MaxLineBytes), so a manifest of any length is streamed in
//     bounded memory.
//   - A .txt file: one item holding the whole document; its id is the file
//     name without the extension.
//   - "-": standard input, as a JSONL manifest (default ids "stdin-3").
//   - A FIFO or device, whatever its name (so <(...), which the shell gives
//     as /dev/fd/63): a JSONL manifest read as a stream; default ids come
//     from its file name as above ("63-1" for line 1 of /dev/fd/63).
//   - A directory: each of its .txt files, sorted by name, as above. It is not
//     searched recursively; sub-folders and other files are ignored.
//
// Every input is read as text (NewTextReader): UTF-8, whose byte-order mark, if any, is dropped, or UTF-16 with a
// byte-order mark (Windows Notepad's "Unicode"), decoded to UTF-8. A .txt document that is not UTF-8 text (a NUL
// byte of a binary file, a byte of Windows-1252) is an error item naming the line (CheckText); a manifest's line,
// an error item of its own.
//
// Guarantees, which the batch pipeline and the results package rely on:
//
//   - Every line of a manifest yields exactly one Item, in order, with its
//     1-based line number, including blank, malformed and over-long lines.
//     A bad line is an Item whose Err names the line and every problem found
//     ("line 7: invalid JSON: ..."); reading continues at the next line.
//     Scan never panics on any input and never silently skips a line.
//   - An Item without Err has non-blank valid UTF-8 text, scales within
//     range, a run-unique id, and an output path (its "out", or its id with
//     its format's extension) that is relative and free of "..". Whether two
//     items name one output file is the batch's to say: only it knows the
//     formats that give default paths their extensions.
//   - Ids are unique across all inputs of a run, bad items included: the
//     first line to use an id owns it, later ones are errors. An Item with an
//     empty ID is always an error whose line could not be decoded far enough
//     to have an id; results keys such rows by source and line instead.
//
// Scan checks that every input exists and is of a known kind before it yields
// anything, so a typo in the last argument fails at once rather than after
// hours of synthesis. Standard input, FIFOs and devices are read as streams,
// once, and a cancelled context ends a scan that waits on one.
package manifest
