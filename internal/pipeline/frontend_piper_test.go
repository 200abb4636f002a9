package pipeline

import (
	"reflect"
	"testing"
)

// Piper's ids for a sentence are ^ _ p1 _ p2 _ ... pn _ $, where the phonemes are espeak-ng's clauses, each followed
// by its terminator's mark: "." "?" "!" end the sentence; "," ":" ";" are followed by a space wherever the clause is,
// the last one included, so a sentence whose last clause ends in one of them ends in "mark _ space _ $" (8/11/12, 0,
// 3, 0, 2 in the standard map). The phonemes of each clause were checked against `espeak-ng -q --ipa -v en-us`, which
// prints one clause per line.
func TestFrontendMatchesPiperIDs(t *testing.T) {
	tests := []struct {
		name, text, phonemes string
		ids                  []int64
	}{
		{"final comma", "Hello world,",
			"həlˈoʊ wˈɜːld, ",
			[]int64{1, 0, 20, 0, 59, 0, 24, 0, 120, 0, 27, 0, 100, 0, 3, 0, 35, 0, 120, 0, 62, 0, 122, 0, 24, 0, 17, 0, 8, 0, 3, 0, 2}},
		{"final colon", "Note the following:",
			"nˈoʊt ðə fˈɑːloʊɪŋ: ",
			[]int64{1, 0, 26, 0, 120, 0, 27, 0, 100, 0, 32, 0, 3, 0, 41, 0, 59, 0, 3, 0, 19, 0, 120, 0, 51, 0, 122, 0, 24, 0, 27, 0, 100, 0, 74, 0, 44, 0, 11, 0, 3, 0, 2}},
		{"final semicolon", "First one; second two;",
			"fˈɜːst wˌʌn; sˈɛkənd tˈuː; ",
			[]int64{1, 0, 19, 0, 120, 0, 62, 0, 122, 0, 31, 0, 32, 0, 3, 0, 35, 0, 121, 0, 102, 0, 26, 0, 12, 0, 3, 0, 31, 0, 120, 0, 61, 0, 23, 0, 59, 0, 26, 0, 17, 0, 3, 0, 32, 0, 120, 0, 33, 0, 122, 0, 12, 0, 3, 0, 2}},
		{"semicolon and numbers", "Set the timeout to 30 seconds; the default is 10.",
			"sˈɛt ðə tˈaɪmaʊt tə θˈɜːɾi sˈɛkəndz; ðə dᵻfˈɔlt ɪz tˈɛn.",
			[]int64{1, 0, 31, 0, 120, 0, 61, 0, 32, 0, 3, 0, 41, 0, 59, 0, 3, 0, 32, 0, 120, 0, 14, 0, 74, 0, 25, 0, 14, 0, 100, 0, 32, 0, 3, 0, 32, 0, 59, 0, 3, 0, 126, 0, 120, 0, 62, 0, 122, 0, 92, 0, 21, 0, 3, 0, 31, 0, 120, 0, 61, 0, 23, 0, 59, 0, 26, 0, 17, 0, 38, 0, 12, 0, 3, 0, 41, 0, 59, 0, 3, 0, 17, 0, 128, 0, 19, 0, 120, 0, 54, 0, 24, 0, 32, 0, 3, 0, 74, 0, 38, 0, 3, 0, 32, 0, 120, 0, 61, 0, 26, 0, 10, 0, 2}},
		{"code, colon, final semicolon", "Call malloc(size) and check the result: it may be NULL;",
			"kˈɔːl mˈælɑːk sˈaɪz ænd tʃˈɛk ðə ɹɪzˈʌlt: ɪt mˈeɪ biː nˈʌl; ",
			[]int64{1, 0, 23, 0, 120, 0, 54, 0, 122, 0, 24, 0, 3, 0, 25, 0, 120, 0, 39, 0, 24, 0, 51, 0, 122, 0, 23, 0, 3, 0, 31, 0, 120, 0, 14, 0, 74, 0, 38, 0, 3, 0, 39, 0, 26, 0, 17, 0, 3, 0, 32, 0, 96, 0, 120, 0, 61, 0, 23, 0, 3, 0, 41, 0, 59, 0, 3, 0, 88, 0, 74, 0, 38, 0, 120, 0, 102, 0, 24, 0, 32, 0, 11, 0, 3, 0, 74, 0, 32, 0, 3, 0, 25, 0, 120, 0, 18, 0, 74, 0, 3, 0, 15, 0, 21, 0, 122, 0, 3, 0, 26, 0, 120, 0, 102, 0, 24, 0, 12, 0, 3, 0, 2}},
		{"parentheses, commas, final semicolon", "The function returns (x, y), not x;",
			"ðə fˈʌŋkʃən ɹᵻtˈɜːnz ˈɛks, wˈaɪ, nˌɑːt ˈɛks; ",
			[]int64{1, 0, 41, 0, 59, 0, 3, 0, 19, 0, 120, 0, 102, 0, 44, 0, 23, 0, 96, 0, 59, 0, 26, 0, 3, 0, 88, 0, 128, 0, 32, 0, 120, 0, 62, 0, 122, 0, 26, 0, 38, 0, 3, 0, 120, 0, 61, 0, 23, 0, 31, 0, 8, 0, 3, 0, 35, 0, 120, 0, 14, 0, 74, 0, 8, 0, 3, 0, 26, 0, 121, 0, 51, 0, 122, 0, 32, 0, 3, 0, 120, 0, 61, 0, 23, 0, 31, 0, 12, 0, 3, 0, 2}},
		{"version number, hash, dotted name, final colon", "Version 2.5.1 fixes bug #1234, the race in sync.Map:",
			"vˈɜːʒən tˈuː pɔɪnt fˈaɪvpɔɪnt wˈʌn fˈɪksᵻz bˈʌɡ hˈæʃ wˈʌn θˈaʊzənd tˈuːhˈʌndɹɪd θˈɜːɾi fˈoːɹ, ðə ɹˈeɪs ɪn sˈɪŋk dˈɑːt mˈæp: ",
			[]int64{1, 0, 34, 0, 120, 0, 62, 0, 122, 0, 108, 0, 59, 0, 26, 0, 3, 0, 32, 0, 120, 0, 33, 0, 122, 0, 3, 0, 28, 0, 54, 0, 74, 0, 26, 0, 32, 0, 3, 0, 19, 0, 120, 0, 14, 0, 74, 0, 34, 0, 28, 0, 54, 0, 74, 0, 26, 0, 32, 0, 3, 0, 35, 0, 120, 0, 102, 0, 26, 0, 3, 0, 19, 0, 120, 0, 74, 0, 23, 0, 31, 0, 128, 0, 38, 0, 3, 0, 15, 0, 120, 0, 102, 0, 66, 0, 3, 0, 20, 0, 120, 0, 39, 0, 96, 0, 3, 0, 35, 0, 120, 0, 102, 0, 26, 0, 3, 0, 126, 0, 120, 0, 14, 0, 100, 0, 38, 0, 59, 0, 26, 0, 17, 0, 3, 0, 32, 0, 120, 0, 33, 0, 122, 0, 20, 0, 120, 0, 102, 0, 26, 0, 17, 0, 88, 0, 74, 0, 17, 0, 3, 0, 126, 0, 120, 0, 62, 0, 122, 0, 92, 0, 21, 0, 3, 0, 19, 0, 120, 0, 27, 0, 122, 0, 88, 0, 8, 0, 3, 0, 41, 0, 59, 0, 3, 0, 88, 0, 120, 0, 18, 0, 74, 0, 31, 0, 3, 0, 74, 0, 26, 0, 3, 0, 31, 0, 120, 0, 74, 0, 44, 0, 23, 0, 3, 0, 17, 0, 120, 0, 51, 0, 122, 0, 32, 0, 3, 0, 25, 0, 120, 0, 39, 0, 28, 0, 11, 0, 3, 0, 2}},
		{"command-line flags, final comma", "Use -v for verbose output, -q for quiet,",
			"jˈuːs vˈiː fɔːɹ vɜːbˈoʊs ˈaʊtpʊt, kjˈuː fɔːɹ kwˈaɪət, ",
			[]int64{1, 0, 22, 0, 120, 0, 33, 0, 122, 0, 31, 0, 3, 0, 34, 0, 120, 0, 21, 0, 122, 0, 3, 0, 19, 0, 54, 0, 122, 0, 88, 0, 3, 0, 34, 0, 62, 0, 122, 0, 15, 0, 120, 0, 27, 0, 100, 0, 31, 0, 3, 0, 120, 0, 14, 0, 100, 0, 32, 0, 28, 0, 100, 0, 32, 0, 8, 0, 3, 0, 23, 0, 22, 0, 120, 0, 33, 0, 122, 0, 3, 0, 19, 0, 54, 0, 122, 0, 88, 0, 3, 0, 23, 0, 35, 0, 120, 0, 14, 0, 74, 0, 59, 0, 32, 0, 8, 0, 3, 0, 2}},
		{"RFC, parentheses, semicolon, final colon", "See RFC 2616, section 14.9 (Cache-Control); it says max-age=0:",
			"sˈiː ˌɑːɹɹˌɛfsˈiː tˈuː θˈaʊzənd sˈɪkshˈʌndɹɪd sˈɪkstiːn, sˈɛkʃən fˈoːɹtiːn pɔɪnt nˈaɪn kˈæʃkəntɹˈoʊl; ɪt sˈɛz mˈæksˈeɪdʒ ˈiːkwəlz zˈiəɹoʊ: ",
			[]int64{1, 0, 31, 0, 120, 0, 21, 0, 122, 0, 3, 0, 121, 0, 51, 0, 122, 0, 88, 0, 88, 0, 121, 0, 61, 0, 19, 0, 31, 0, 120, 0, 21, 0, 122, 0, 3, 0, 32, 0, 120, 0, 33, 0, 122, 0, 3, 0, 126, 0, 120, 0, 14, 0, 100, 0, 38, 0, 59, 0, 26, 0, 17, 0, 3, 0, 31, 0, 120, 0, 74, 0, 23, 0, 31, 0, 20, 0, 120, 0, 102, 0, 26, 0, 17, 0, 88, 0, 74, 0, 17, 0, 3, 0, 31, 0, 120, 0, 74, 0, 23, 0, 31, 0, 32, 0, 21, 0, 122, 0, 26, 0, 8, 0, 3, 0, 31, 0, 120, 0, 61, 0, 23, 0, 96, 0, 59, 0, 26, 0, 3, 0, 19, 0, 120, 0, 27, 0, 122, 0, 88, 0, 32, 0, 21, 0, 122, 0, 26, 0, 3, 0, 28, 0, 54, 0, 74, 0, 26, 0, 32, 0, 3, 0, 26, 0, 120, 0, 14, 0, 74, 0, 26, 0, 3, 0, 23, 0, 120, 0, 39, 0, 96, 0, 23, 0, 59, 0, 26, 0, 32, 0, 88, 0, 120, 0, 27, 0, 100, 0, 24, 0, 12, 0, 3, 0, 74, 0, 32, 0, 3, 0, 31, 0, 120, 0, 61, 0, 38, 0, 3, 0, 25, 0, 120, 0, 39, 0, 23, 0, 31, 0, 120, 0, 18, 0, 74, 0, 17, 0, 108, 0, 3, 0, 120, 0, 21, 0, 122, 0, 23, 0, 35, 0, 59, 0, 24, 0, 38, 0, 3, 0, 38, 0, 120, 0, 21, 0, 59, 0, 88, 0, 27, 0, 100, 0, 11, 0, 3, 0, 2}},
	}
	f, cfg, _ := testFrontend(t, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.Sentences(tt.text, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Phonemes != tt.phonemes || !reflect.DeepEqual(got[0].IDs, tt.ids) {
				t.Fatalf("Sentences(%q) = %+v\nwant phonemes %q, ids %v", tt.text, got, tt.phonemes, tt.ids)
			}
		})
	}
}

// Blocks of raw phonemes follow piper1-gpl's rules: the block's content (trimmed) is used code point by code point,
// with no decomposition; a space phoneme stands between it and words that a space separates from it; the block
// continues the sentence before it, and the first sentence of the words after it continues the same sentence.
// Normalisation reads the words around a block and never the block itself.
func TestFrontendRawPhonemes(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // phonemes per sentence, with and without normalisation
	}{
		{"inside a sentence", "Say [[ həlˈoʊ ]] to them.", []string{"sˈeɪ həlˈoʊ tə ðˌɛm."}},
		{"alone", "[[ həlˈoʊ ]]", []string{"həlˈoʊ"}},
		{"glued to words", "Say[[həlˈoʊ]]now", []string{"sˈeɪhəlˈoʊnˈaʊ"}},
		// No sentence ends before or after a block: "Hi." and "Bye." become one sentence, "Next." is the second.
		{"between sentences", "Hi. [[ ə ]] Bye. Next.", []string{"hˈaɪ. ə bˈaɪ.", "nˈɛkst."}},
		{"at the start", "[[ ðɪs ]] is it.", []string{"ðɪs ɪz ɪt."}},
		{"at the end", "It is [[ ðɪs ]]", []string{"ɪɾ ˈɪz ðɪs"}}, // espeak-ng stresses a clause-final "is"
		{"side by side", "[[a]][[b]]c", []string{"absˈiː"}},
		// The comma's clause already ends in a space, and the block adds its own: two spaces, as in Piper.
		{"after a comma", "One, [[ tˈuː ]] three.", []string{"wˈʌn,  tˈuː θɹˈiː."}},
		{"several blocks", "[[ wˈʌn ]] and [[ tˈuː ]].", []string{"wˈʌn ænd tˈuː"}},
		{"digits and abbreviations are not normalised inside", "Read [[ 1 ]] now.", []string{"ɹˈiːd 1 nˈaʊ."}},
		{"precomposed phonemes stay", "[[ ç ]]", []string{"ç"}},
		{"empty block", "Hi [[ ]] there.", []string{"hˈaɪ  ðˈɛɹ."}},
	}
	for _, normalize := range []bool{false, true} {
		f, cfg, warnings := testFrontend(t, normalize)
		for _, tt := range tests {
			got, err := f.Sentences(tt.text, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var phonemes []string
			for _, s := range got {
				phonemes = append(phonemes, s.Phonemes)
			}
			if !reflect.DeepEqual(phonemes, tt.want) {
				t.Errorf("normalize=%v %s: Sentences(%q) phonemes %q, want %q", normalize, tt.name, tt.text, phonemes, tt.want)
			}
		}
		if len(*warnings) != 0 {
			t.Errorf("normalize=%v: warnings %q", normalize, *warnings)
		}
	}
}

// A sentence that a block joins names, as its source, all it was made of: the words before the block, the block as
// written and the words after it, so that word timestamps time the words after a block too.
func TestFrontendRawPhonemesSentenceSource(t *testing.T) {
	f, cfg, _ := testFrontend(t, true)
	got, err := f.Sentences("It costs 5 dollars. Say [[ həlˈoʊ ]] to them.", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Source != "It costs 5 dollars." || got[1].Source != "Say [[ həlˈoʊ ]] to them." {
		t.Errorf("sources %q", []string{got[0].Source, got[len(got)-1].Source})
	}
}

func TestFrontendRawPhonemeIDs(t *testing.T) {
	f, cfg, warnings := testFrontend(t, true)
	got, err := f.Sentences("Say [[ ç1 ]] now.", cfg)
	if err != nil {
		t.Fatal(err)
	}
	// s ˈ e ɪ space ç 1 space n ˈ a ʊ .
	want := []int64{1, 0, 31, 0, 120, 0, 18, 0, 74, 0, 3, 0, 40, 0, 131, 0, 3, 0, 26, 0, 120, 0, 14, 0, 100, 0, 10, 0, 2}
	if len(got) != 1 || !reflect.DeepEqual(got[0].IDs, want) || got[0].Text != "Say [[ ç1 ]] now." {
		t.Fatalf("Sentences = %+v\nwant ids %v", got, want)
	}
	// A phoneme the voice has no id for is left out and reported, as Piper does.
	got, err = f.Sentences("[[ hЖi ]]", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 0, 20, 0, 21, 0, 2}; len(got) != 1 || !reflect.DeepEqual(got[0].IDs, want) || len(*warnings) != 1 {
		t.Fatalf("Sentences = %+v, warnings %q; want ids %v and one warning", got, *warnings, want)
	}
}

// Text that only looks like a block goes to espeak-ng as it is.
func TestFrontendNotRawPhonemes(t *testing.T) {
	f, cfg, _ := testFrontend(t, false)
	for _, text := range []string{"Not a [[ block ] here.", "[[ a\nb ]]", "[ə] and [ ə ]"} {
		got, err := f.Sentences(text, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.Espeak.Phonemize(text, cfg.Espeak.Voice)
		if err != nil {
			t.Fatal(err)
		}
		var phonemes []string
		for _, s := range got {
			phonemes = append(phonemes, s.Phonemes)
		}
		if !reflect.DeepEqual(phonemes, want) {
			t.Errorf("Sentences(%q) phonemes %q, want espeak-ng's %q", text, phonemes, want)
		}
	}
}
