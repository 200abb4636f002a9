// Package textnorm turns raw English text into sentences that a phonemizer (espeak-ng) can speak:
// Sentences splits a document, Normalize rewrites one sentence into words, and SplitLong cuts a
// sentence that is too long for one synthesis call. The usual order is
//
//	for _, s := range textnorm.Sentences(doc) {
//		for _, piece := range textnorm.SplitLong(textnorm.Normalize(s), 400) { ... }
//	}
//
// The rules are written by hand: no Go library does English text normalisation for speech well,
// and espeak-ng's own reading is weaker than these rules: espeak-ng 1.51 reads "In 1984" as
// "nineteen hundred and eighty-four", "$3.50" as "dollar three point five zero", and ends a clause
// after the period of "Dr. Smith".
//
// # What Normalize rewrites
//
//   - Cardinals "1,234", decimals "3.14", ".5", signed "-5"/"+5"/"−5", leading-zero codes "007"
//     (digit by digit), numbers longer than 18 digits (digit by digit), version numbers "1.2.3", "18.17.1",
//     "v2.10.1" (each part a number), IPv4 addresses "192.168.1.1" (with "dot").
//   - Ordinals "1st", "22nd", "103rd"; decades "1980s", "'90s"; plural round numbers "1,000s";
//     numbers inside compounds ("1st-class", "mid-1990s", "pre-1945", "50-50", "MP3").
//   - Numbers with more than 18 digits: digit by digit, unless written with group commas (up to
//     36 digits, "one hundred quintillion").
//   - Years, only in year-like context: after in/since/by/from/until/of/during/circa/..., before
//     BC/AD, inside parentheses "(1949)", in dates and year ranges. 1984 "nineteen eighty-four",
//     1905 "nineteen oh five", 1900 "nineteen hundred", 2005 "two thousand five", 2024 "twenty
//     twenty-four". A number from 1100 to 2099 with no lower-case word after it ("in the summer of
//     that year, 1816, ...") is read as a year too; otherwise a four-digit number is a cardinal. After
//     words that come before counts as often (of, to, about, the, ...), a plural noun after the number
//     makes it a count ("a total of 1250 students"). A season's second year is read whole ("2008-09").
//   - Dates: ISO 2024-03-05, US-order 3/5/2024 and 3/5/24 (25/12/2024 is read day first because 25 is
//     no month), 05/03 and 25/03 (a leading zero makes them dates, not fractions), 25.12.2024 (day first),
//     "March 5, 2024", "Mar. 5th", "5 March 2024" ("the fifth of March twenty twenty-four"), "Jan. 2020". Days
//     are checked against their month and leap years: a date that does not exist is read as written, never as
//     a date (31/02/2020 "thirty-one slash zero two slash two thousand twenty", "Feb 30" "February thirty").
//   - Times "3:30 pm", "3:30pm", "5 p.m.", "14:05", "9:00", "9:00:15"; ratios "3:1", "16:9". A time that
//     does not exist is read with "colon" (25:61 "twenty-five colon sixty-one"). Spans of time "9am-5pm",
//     "10-11am", "8:30-10:00", "2:00-3:15 p.m." ("nine AM to five PM") and of weekdays "Mon-Fri".
//   - Durations written with letters: "1h 30m", "1h30m", "2m 30s", "1 hr 20 min" ("one hour thirty minutes");
//     "m" and "s" are minutes and seconds only next to another part of a duration ("5m" alone is meters).
//   - Money in $ £ € ¥ ₹ ₩ with cents/pence ("$3.50"), scale words or letters ("$2.5 million",
//     "$5M", "$3bn", "$1.2 bn"), ranges "$5-10", "$2-3 billion", prices per something "$15/hr",
//     "$1,200/mo", negative amounts; cents "5¢". "3B" is three billion only with a
//     currency or a money word near it ("3B dollars", "worth 3B"); elsewhere it is a label ("Flat 3B").
//   - Percentages "12.5%", fractions "1/2", "3/4", "5/8", mixed numbers "1 1/2" and "2-1/2", fractions in
//     compounds "1/2-inch" ("a 1/2-inch pipe": "a half inch pipe"), vulgar fractions "½", idioms "24/7" and "9/11",
//     splits of a hundred "80/20"; ranges "5-10", "1990-1995", "1990-95", "5-10 km".
//   - Units after numbers, apart or glued: lengths, masses, volumes (also cooking measures: tbsp., tsp., pt.,
//     qt., gal.), speeds, data sizes and rates, frequencies, durations, power, temperatures (72°F), feet and
//     inches (5'11", "3 in."), "sq. ft.", "fl. oz.", "x" (times). tbsp., tsp., oz., lb., qt. and yd. are read out
//     without a number too ("a tbsp. of oil").
//   - Phone numbers 555-1234, 555-123-4567, 1-800-555-1234, "(555) 123-4567", "(555)123-4567",
//     "+1-555-123-4567", "1.800.555.1234", read digit by digit per
//     group; codes after id words ("Box 2915", "ISBN 978-3-16-148410-0", "ISBN-13: 9783161484100", "call 911"),
//     hyphenated ISBNs with a valid check digit anywhere, and codes glued to letters ("C2766") digit by digit.
//   - Regnal numerals after monarchs' names ("George III" -> "George the third", "Henry VIII's" -> "Henry
//     the eighth's") and Roman numerals after numbered nouns ("World War II" -> "World War two", "Chapter
//     IV", "CHAPTER XL", up to 399 after nouns that divide a text).
//   - Currency codes after amounts ("5 USD") and country-prefixed dollars ("US$5").
//   - Titles before names (Dr., Mr., Mrs., Ms., Prof., Gen., Capt., Rev., Messrs., ...), "St." as Saint or
//     Street and "Dr." as Doctor or Drive from the neighbouring words, Jr./Sr., Latin (etc., e.g.,
//     i.e., vs., cf., viz., et al.), No./p./pp./vol./ch./fig./Apt./Ste./Bldg. before numbers, approx.,
//     Inc./Ltd./Co./Pty., street words (Ave., Blvd., Rd.), month and (before dates) weekday abbreviations.
//   - Initialisms "U.S." -> "US", "a.m." -> "AM" (espeak spells capitals, but reads "a m" badly); degrees
//     with two-letter parts "Ph.D." -> "PHD", "B.Sc.", "LL.B.".
//   - Periods that are not sentence ends are dropped, because espeak-ng ends a clause at every period:
//     after abbreviations, after initials before a name ("J. R. R. Tolkien" -> "J R R Tolkien"; "A."
//     keeps its period, since a lone "A" is read as the article) and before a lower-case word or a
//     number ("c. 54" -> "c fifty-four"). An abbreviation's period that ends the sentence stays.
//   - URLs and e-mail addresses: "www.example.com/a" -> "w w w dot example dot com slash a",
//     "john@example.org" -> "john at example dot org"; the scheme (https://) is not read.
//   - "&" -> "and" (also inside "R&D"), "#5" -> "number five", "#tag" -> "hashtag tag", "~5" ->
//     "about five", "6 x 4" -> "six by four", "5*3", "5 * 3" and "5 × 3" -> "five times three" ("2 × 3 m" is "two by
//     three meters"), lone "+", "=", "@", "%", "×", "±", "<", ">", "≤", "≥".
//   - ALL-CAPS common words ("THE", "STOP") are lower-cased so they are read, not spelled; other
//     all-caps words are acronyms and stay (espeak spells them). Ambiguous ones (US, IT, AM, OR)
//     are lower-cased only when the whole sentence is in capitals.
//
// Digits glued to letters are read as numbers ("MP3" -> "MP three"); any ASCII digit that no rule
// claimed is read digit by digit, so the output never contains an ASCII digit.
//
// Compatibility forms of Latin letters and digits are read as those letters and digits first (fold):
// full-width "３" and "ＡＢＣ" (and a full-width sign next to them: "＄５", "１２：３０"), ligatures "ﬃ",
// mathematical letters "𝐛𝐨𝐥𝐝", circled numbers "①", Roman numeral characters "Ⅻ", "㎞", the long s "ſ".
// Superscripts (km²), letterlike symbols (™, №, ℃) and Chinese punctuation between Chinese characters stay.
//
// Markdown, which language models write and people pipe in, is read as the text it marks up (markdown.go):
// emphasis and code marks at the edges of words go ("*x*", "**x**", "***x***", "_x_", "__x__", "~~x~~", "`x`", and
// phrases "*like this*"); a link "[text](url)" is read as its text, an image "![alt](url)" as its alt text (nothing
// if that is empty). Marks inside a word ("a*b", "snake_case_name") or alone ("a * b", "***") are not markup and
// stay. A sentence's mark inside emphasis ends the sentence ("**Note.** Next"), as one inside quotes does.
// Sentences reads the marks at the start of a line: a heading's "#"s, a bullet ("* ", "- ", "+ ", a task box "[ ]"),
// a quote's ">"s, a code fence ("```go", "~~~") and a rule or underline ("---", "* * *", "===") are not read; a
// heading is a sentence of its own and an item starts one (see Sentences and splitting). Inside a code block the code
// is read as text, each line examined like any other.
//
// An ellipsis ("...", "…", ". . .") is a pause, where espeak-ng ran the words on either side into one ("Wait...
// what" was "wˈeɪtwˌʌt"): a comma between words ("Wait, what"), a full stop at the end of the sentence, nothing
// before the first word or next to another mark ("Really?..."). In a path or code ("src/.../x", "f(...)") it stays.
//
// Separators are not read: a mark repeated three times or more ("***", "=====", "~~~"), and a
// sentence of marks alone ("* * *", "!!!"), which Normalize makes "": espeak-ng reads them by name
// ("asterisk asterisk asterisk", "exclamation").
//
// # What is not normalised
//
// Roman numerals other than the ones above ("Sargon I", "Rocky II"); non-English number formats
// ("3,5" is read as the list "three, five"); currency codes before amounts ("USD 5"); house numbers
// and postcodes; chemical formulas; mathematical expressions beyond single symbols; digits of
// other scripts ("١٢٣"); words in other scripts (passed through untouched). Adjectival amounts are read as plain
// amounts ("a $5 bill" -> "a five dollars bill"). Disambiguation is by local context only, so
// "1984 people" is a count, "5 May" is a date and "Rocky II" stays as written.
//
// Of Markdown: tables (their pipes are silent, but a row's cells run into one sentence), reference links
// "[text][ref]" and their "[ref]: url" lines, HTML tags ("<b>" is "b"), backslash escapes ("\*" is "backslash
// asterisk"), indented code blocks, and the code inside a fenced block, which is read as text.
//
// # Sentences and splitting
//
// Sentences breaks at . ? ! (and 。！？) followed by whitespace, except after initials, dotted
// initialisms, numbered-list numbers and ellipses (". . ." too), or before a lower-case word; blank lines always end a
// sentence. So does Markdown's structure: a heading line is a sentence of its own, a bullet item starts one (items
// are mostly words without a full stop, which ran together without a pause), and so does a numbered item that is
// "1." or follows an item (a wrapped line that starts "1984. Then" does not). An abbreviation's period ends no sentence before a number, nor before the kind of word the
// abbreviation expects: any word after a title ("Dr. Smith", "Mt. Everest"), a label after "No.", "Apt." or
// a month ("Apt. 4B", "Sept. 11"), another company word after "Co." ("Co. Ltd."), an address word after a
// street ("Ave. NW"). Before other capitalised words these may end a sentence ("... etc. Then"). A degree ends one
// only before a word that usually starts a sentence ("He earned a B.A. He then left", but "a B.A. Program").
// Text without spaces (Chinese, Japanese) is not split inside.
// SplitLong never drops text: joining its pieces with spaces gives back the sentence's words.
//
// All three functions are linear in the input size (1 MB in well under a second, see
// TestLinearTime), never panic, and drop invalid UTF-8 and control characters.
package textnorm
