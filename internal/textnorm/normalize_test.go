package textnorm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// normalizeCases are exact readings, grouped by what they exercise. They also seed FuzzNormalize.
var normalizeCases = []struct{ in, want string }{
	// cardinals
	{"There are 0 cats.", "There are zero cats."},
	{"I have 7 cats.", "I have seven cats."},
	{"13", "thirteen"},
	{"21", "twenty-one"},
	{"99", "ninety-nine"},
	{"100", "one hundred"},
	{"101", "one hundred one"},
	{"999", "nine hundred ninety-nine"},
	{"1001", "one thousand one"},
	{"100000", "one hundred thousand"},
	{"It costs 1,234 points.", "It costs one thousand two hundred thirty-four points."},
	{"12,345,678", "twelve million three hundred forty-five thousand six hundred seventy-eight"},
	{"1234567890123456789012", "one two three four five six seven eight nine zero one two three four five six seven eight nine zero one two"},
	{"Room 007.", "Room zero zero seven."},
	// ordinals
	{"He came 1st.", "He came first."},
	{"2nd", "second"},
	{"3rd", "third"},
	{"4th", "fourth"},
	{"11th", "eleventh"},
	{"12th", "twelfth"},
	{"21st", "twenty-first"},
	{"22nd", "twenty-second"},
	{"103rd", "one hundred third"},
	{"100th", "one hundredth"},
	{"the 19th century", "the nineteenth century"},
	// decimals and signs
	{"Pi is 3.14.", "Pi is three point one four."},
	{".5", "point five"},
	{"0.5", "zero point five"},
	{"-5", "minus five"},
	{"It was -5 outside.", "It was minus five outside."},
	{"+3", "plus three"},
	{"−7", "minus seven"},
	{"-0.25", "minus zero point two five"},
	{"version 1.2.3", "version one point two point three"},
	// years
	{"In 1984 we left.", "In nineteen eighty-four we left."},
	{"in 1905", "in nineteen oh five"},
	{"Born in 1900, died in 2005.", "Born in nineteen hundred, died in two thousand five."},
	{"in 2000", "in two thousand"},
	{"By 2024 it was done.", "By twenty twenty-four it was done."},
	{"in 2010", "in twenty ten"},
	{"in 1066", "in ten sixty-six"},
	{"Orwell (1949) wrote it.", "Orwell (nineteen forty-nine) wrote it."},
	{"44 BC", "forty-four BC"},
	{"1984 people came.", "one thousand nine hundred eighty-four people came."},
	{"the 1980s", "the nineteen eighties"},
	{"the '90s", "the nineties"},
	{"the 1800s", "the eighteen hundreds"},
	// dates
	{"2024-03-05", "March fifth, twenty twenty-four"},
	{"1999-12-31", "December thirty-first, nineteen ninety-nine"},
	{"3/5/2024", "March fifth, twenty twenty-four"},
	{"12/25/2024", "December twenty-fifth, twenty twenty-four"},
	{"25/12/2024", "December twenty-fifth, twenty twenty-four"},
	{"3/5/24", "March fifth, twenty-four"},
	{"On March 5, 2024, we met.", "On March fifth, twenty twenty-four, we met."},
	{"Mar. 5th", "March fifth"},
	{"Jan 1, 2000", "January first, two thousand"},
	{"On 5 March 2024 we met.", "On the fifth of March twenty twenty-four we met."},
	{"in March 2024", "in March twenty twenty-four"},
	{"Sept. 11, 2001", "September eleventh, two thousand one"},
	// times
	{"3:30 pm", "three thirty PM"},
	{"3:30pm", "three thirty PM"},
	{"14:05", "fourteen oh five"},
	{"9:00", "nine o'clock"},
	{"14:00", "fourteen hundred"},
	{"0:15", "zero fifteen"},
	{"1:30:05", "one hour, thirty minutes and five seconds"},
	{"3:05 a.m.", "three oh five AM."},
	{"at 3:05 a.m. today", "at three oh five AM today"},
	{"5 pm", "five PM"},
	{"5pm", "five PM"},
	{"Meet at 12 p.m. sharp.", "Meet at twelve PM sharp."},
	// money
	{"It costs $5.", "It costs five dollars."},
	{"$1", "one dollar"},
	{"$3.50", "three dollars and fifty cents"},
	{"$0.99", "ninety-nine cents"},
	{"$0.01", "one cent"},
	{"$1.01", "one dollar and one cent"},
	{"$3.5", "three dollars and fifty cents"},
	{"$1,000", "one thousand dollars"},
	{"A $2.5 million deal.", "A two point five million dollars deal."},
	{"$5M", "five million dollars"},
	{"$3bn", "three billion dollars"},
	{"$10k", "ten thousand dollars"},
	{"-$5", "minus five dollars"},
	{"$5-10", "five to ten dollars"},
	{"$1.234", "one point two three four dollars"},
	{"£5", "five pounds"},
	{"£1.20", "one pound and twenty pence"},
	{"€3.20", "three euros and twenty cents"},
	{"¥100", "one hundred yen"},
	{"5¢", "five cents"},
	{"1¢", "one cent"},
	{"Price: $1,000,000.00.", "Price: one million dollars."},
	// percent ratio fraction range
	{"Up 12.5% today.", "Up twelve point five percent today."},
	{"100%", "one hundred percent"},
	{"-3%", "minus three percent"},
	{"The ratio is 3:1.", "The ratio is three to one."},
	{"16:9", "sixteen to nine"},
	{"1/2", "one half"},
	{"3/4", "three quarters"},
	{"2/3", "two thirds"},
	{"5/8", "five eighths"},
	{"1/10", "one tenth"},
	{"3/0", "three over zero"},
	{"Add 1 1/2 cups.", "Add one and a half cups."},
	{"1½", "one and a half"},
	{"It's 24/7.", "It's twenty-four seven."},
	{"1990-1995", "nineteen ninety to nineteen ninety-five"},
	{"1990-95", "nineteen ninety to ninety-five"},
	{"5-10", "five to ten"},
	{"5–10", "five to ten"},
	{"10-20 km", "ten to twenty kilometers"},
	{"5-10%", "five to ten percent"},
	// units
	{"5 km", "five kilometers"},
	{"1 km", "one kilometer"},
	{"3 kg", "three kilograms"},
	{"10 ft", "ten feet"},
	{"1 ft", "one foot"},
	{"He is 5'11\" tall.", "He is five feet eleven inches tall."},
	{"6'", "six feet"},
	{"It was 72°F.", "It was seventy-two degrees Fahrenheit."},
	{"-5°C", "minus five degrees Celsius"},
	{"90°", "ninety degrees"},
	{"100 mph", "one hundred miles per hour"},
	{"3 GB", "three gigabytes"},
	{"5 ms", "five milliseconds"},
	{"2.5 L", "two point five liters"},
	{"5s", "five seconds"},
	{"3h", "three hours"},
	{"He ran 5km.", "He ran five kilometers."},
	{"1920x1080", "one thousand nine hundred twenty by one thousand eighty"},
	// abbreviations
	{"Dr. Smith is here.", "Doctor Smith is here."},
	{"Dr Smith", "Doctor Smith"},
	{"Mulholland Dr. is long.", "Mulholland Drive is long."},
	{"I live on Main St. in St. Louis.", "I live on Main Street in Saint Louis."},
	{"St. Louis", "Saint Louis"},
	{"Mr. and Mrs. Jones", "Mister and Missus Jones"},
	{"Ms. Lee", "Miz Lee"},
	{"Prof. Brown", "Professor Brown"},
	{"Martin Luther King Jr. spoke.", "Martin Luther King Junior spoke."},
	{"Lakers vs. Celtics", "Lakers versus Celtics"},
	{"apples, pears, etc.", "apples, pears, et cetera."},
	{"Fruit, e.g. apples.", "Fruit, for example apples."},
	{"One, i.e. the first.", "One, that is the first."},
	{"No. 5 won.", "Number five won."},
	{"No. I won't.", "No. I won't."},
	{"It is approx. 5 km.", "It is approximately five kilometers."},
	{"Acme Inc. is big.", "Acme Incorporated is big."},
	{"See Fig. 3 and p. 12.", "See Figure three and page twelve."},
	{"pp. 10-20", "pages ten to twenty"},
	{"The U.S. Army.", "The US Army."},
	{"in the U.S.", "in the US."},
	{"at 5 p.m. today", "at five PM today"},
	// addresses and symbols
	{"Visit https://example.com now.", "Visit example dot com now."},
	{"www.example.com", "w w w dot example dot com"},
	{"example.com/path?q=1", "example dot com slash path question mark q equals one"},
	{"Mail john@example.org.", "Mail john at example dot org."},
	{"john.doe@example.co.uk", "john dot doe at example dot co dot uk"},
	{"Node.js", "Node.js"},
	{"file.txt", "file.txt"},
	{"A & B", "A and B"},
	{"R&D", "R and D"},
	{"AT&T", "AT and T"},
	{"#1 hit", "number one hit"},
	{"#hashtag", "hashtag hashtag"},
	{"~5", "about five"},
	{"Call 555-1234.", "Call five five five, one two three four."},
	{"555-123-4567", "five five five, one two three, four five six seven"},
	{"1-800-555-1234", "one, eight zero zero, five five five, one two three four"},
	// caps and mixed
	{"THE END", "the end"},
	{"STOP THE CAR NOW", "stop the CAR now"},
	{"NASA and the FBI.", "NASA and the FBI."},
	{"IT is here.", "IT is here."},
	{"WE LOVE IT", "we love it"},
	{"MP3", "MP three"},
	{"COVID-19", "COVID-nineteen"},
	{"3D", "three D"},
	{"B2B", "B two B"},
	{"1,2,3", "one, two, three"},
	// other scripts and junk
	{"🙂 hi 5", "🙂 hi five"},
	{"日本 2 日本", "日本 two 日本"},
	{"Привет, мир.", "Привет, мир."},
	{"\x00bad\xffbyte 5", "badbyte five"},
	{"end.\fNext\vline\u0085here", "end. Next line here"},
	{"\x1b[31mRed\x1b[0m alert at 5", "Red alert at five"},
	{"tab\there", "tab here"},
	{"  spaced   out  ", "spaced out"},
	{"", ""},
}

func TestNormalize(t *testing.T) {
	for _, c := range normalizeCases {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q)\n got  %q\n want %q", c.in, got, c.want)
		}
	}
}

// TestNormalizeContext checks readings that depend on the neighbouring words.
func TestNormalizeContext(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"year after preposition", "It happened in 1999.", "It happened in nineteen ninety-nine."},
		{"day before month keeps the sentence period", "It was the 4th October. Then", "It was the fourth of October. Then"},
		{"determiner before a day", "The following 23rd April came.", "The following twenty-third of April came."},
		{"year after the", "Back to the 1929 peak.", "Back to the nineteen twenty-nine peak."},
		{"regnal ordinal", "George III. was king.", "George the third was king."},
		{"regnal at sentence end", "It was Henry VIII.", "It was Henry the eighth."},
		{"numbered noun", "World War II and Chapter IV.", "World War two and Chapter four."},
		{"pronoun after a name", "John I think so.", "John I think so."},
		{"code after an id word", "Write to Box 2915, Dallas.", "Write to Box two nine one five, Dallas."},
		{"short number after an id word", "Room 12 is free.", "Room twelve is free."},
		{"glued code", "Serial C2766 found.", "Serial C two seven six six found."},
		{"dimensions", "A 6 x 4 rug.", "A six by four rug."},
		{"hyphenated compounds", "A 1st-class, 20th-century, mid-1990s, pre-1945, 50-50 deal.",
			"A first-class, twentieth-century, mid-nineteen nineties, pre-nineteen forty-five, fifty-fifty deal."},
		{"plural round numbers", "1,000s of fans in the 100s.", "thousands of fans in the hundreds."},
		{"emergency number", "Call 911 now, not 112 times.", "Call nine one one now, not one hundred twelve times."},
		{"area code", "(555) 123-4567", "(five five five) one two three, four five six seven"},
		{"book number", "ISBN 978-3-16-148410-0", "ISBN nine seven eight, three, one six, one four eight four one zero, zero"},
		{"grouped number beyond uint64", "100,000,000,000,000,000,000 stars", "one hundred quintillion stars"},
		{"currency with country prefix", "US$5 or 5 USD", "five dollars or five US dollars"},
		{"symbols", "5 ± 2 and x ≥ 3", "five plus or minus two and x greater than or equal to three"},
		{"scale letter on a count", "It sold 20M units in 4K.", "It sold twenty million units in four K."},
		{"decimal comma in money", "It costs €29,99 or €1,299.", "It costs twenty-nine euros and ninety-nine cents or one thousand two hundred ninety-nine euros."},
		{"initials lose their periods", "J. R. R. Tolkien met A. H. Smith.", "J R R Tolkien met A. H Smith."},
		{"sentence-final letter keeps its period", "It was plan B.", "It was plan B."},
		{"unknown abbreviation before lower case", "the 14 George III. c. 54, s. 4 says", "the fourteen George the third c fifty-four, s four says"},
		{"no year cue is a count", "We sold 1999 copies.", "We sold one thousand nine hundred ninety-nine copies."},
		{"year before era", "Rome fell in 476 AD.", "Rome fell in four hundred seventy-six AD."},
		{"saint at sentence start", "St. Paul's is old.", "Saint Paul's is old."},
		{"saint between names", "Bury St. Edmunds is old.", "Bury Saint Edmunds is old."},
		{"street before a comma", "Go to Baker St., London.", "Go to Baker Street, London."},
		{"dotted title without a name", "The Gen. said so.", "The General said so."},
		{"undotted title without a name", "The Col is wide.", "The Col is wide."},
		{"final abbreviation keeps the sentence period", "We met the Dr.", "We met the Doctor."},
		{"mid-sentence abbreviation loses its period", "Smith et al. wrote it.", "Smith et al wrote it."},
		{"meridiem period ends the sentence", "It starts at 9 a.m.", "It starts at nine AM."},
		{"no. without number is a word", "The answer is no.", "The answer is no."},
		{"weekday before a date", "Sat., March 5", "Saturday, March fifth"},
		{"weekday without a date", "Sun.", "Sun."},
		{"scale word after money", "It cost $3 billion.", "It cost three billion dollars."},
		{"unit after a range", "Walk 5-10 km daily.", "Walk five to ten kilometers daily."},
		{"quotes kept", "\"It's 5,\" she said.", "\"It's five,\" she said."},
		{"parentheses kept", "(see p. 5)", "(see page five)"},
		{"shouting lower-cases ambiguous words", "US TROOPS ARE IN IT NOW", "us TROOPS are in it now"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Normalize(c.in); got != c.want {
				t.Errorf("Normalize(%q)\n got  %q\n want %q", c.in, got, c.want)
			}
		})
	}
}

func TestNumberWords(t *testing.T) {
	cases := []struct {
		n                       uint64
		cardinal, ordinal, year string
	}{
		{0, "zero", "zeroth", "zero"},
		{5, "five", "fifth", "five"},
		{12, "twelve", "twelfth", "twelve"},
		{40, "forty", "fortieth", "forty"},
		{1000, "one thousand", "one thousandth", "one thousand"},
		{1100, "one thousand one hundred", "one thousand one hundredth", "eleven hundred"},
		{1905, "one thousand nine hundred five", "one thousand nine hundred fifth", "nineteen oh five"},
		{2009, "two thousand nine", "two thousand ninth", "two thousand nine"},
		{2099, "two thousand ninety-nine", "two thousand ninety-ninth", "twenty ninety-nine"},
		{1000000001, "one billion one", "one billion first", "one billion one"},
		{18446744073709551615, "eighteen quintillion four hundred forty-six quadrillion seven hundred forty-four trillion " +
			"seventy-three billion seven hundred nine million five hundred fifty-one thousand six hundred fifteen",
			"eighteen quintillion four hundred forty-six quadrillion seven hundred forty-four trillion " +
				"seventy-three billion seven hundred nine million five hundred fifty-one thousand six hundred fifteenth",
			"eighteen quintillion four hundred forty-six quadrillion seven hundred forty-four trillion " +
				"seventy-three billion seven hundred nine million five hundred fifty-one thousand six hundred fifteen"},
	}
	for _, c := range cases {
		if got := cardinal(c.n); got != c.cardinal {
			t.Errorf("cardinal(%d) = %q, want %q", c.n, got, c.cardinal)
		}
		if got := ordinal(c.n); got != c.ordinal {
			t.Errorf("ordinal(%d) = %q, want %q", c.n, got, c.ordinal)
		}
		if got := year(c.n); got != c.year {
			t.Errorf("year(%d) = %q, want %q", c.n, got, c.year)
		}
	}
}

// TestNormalizeLeavesNoDigits checks the promise the phonemizer relies on: no ASCII digit survives.
func TestNormalizeLeavesNoDigits(t *testing.T) {
	inputs := []string{"a1b2c3", "1.2.3.4.5", "12:34:56:78", "1/2/3/4", "x=1+2", "9-9-9-9-9", "$1-$2", "3..4", "1e10",
		"0x1F", "v2.0-rc1", "2024-13-45", "5'5'5", "10:99", "#", "$", "1,,2", "...5...", "5%%", "°5"}
	for _, in := range inputs {
		got := Normalize(in)
		if strings.ContainsAny(got, "0123456789") {
			t.Errorf("Normalize(%q) = %q, still has digits", in, got)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Normalize(%q) = %q, invalid UTF-8", in, got)
		}
	}
}

func TestNormalizeAbbreviationPeriod(t *testing.T) {
	cases := []struct{ in, want string }{
		{"at 11:35 a.m.,", "at eleven thirty-five AM,"},
		{"at 11:35 a.m.", "at eleven thirty-five AM."},
		{"(at 5 p.m.)", "(at five PM.)"},
		{"Smith et al.; Jones", "Smith et al; Jones"},
	}
	for _, c := range cases {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestNormalizeRegressions holds inputs that once broke an invariant.
func TestNormalizeRegressions(t *testing.T) {
	for _, in := range []string{"5×", "5x", "12345×", "1×2", "x", "×", "5 ×", "$", "-", "−", "#", "~", "1:", ":1", "a.", ".", "'"} {
		out := Normalize(in)
		if strings.ContainsAny(out, "0123456789") || !utf8.ValidString(out) {
			t.Errorf("Normalize(%q) = %q", in, out)
		}
	}
}
