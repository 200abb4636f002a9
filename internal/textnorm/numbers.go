package textnorm

import "strings"

var onesWords = [...]string{
	"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
}

var tensWords = [...]string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

// scaleWords names the powers of one thousand; index i is 1000^i.
var scaleWords = [...]string{"", "thousand", "million", "billion", "trillion", "quadrillion", "quintillion",
	"sextillion", "septillion", "octillion", "nonillion", "decillion"}

// maxCardinalDigits is the longest digit string read as one number. Longer strings
// (serial numbers, digits of pi) are read digit by digit, which is what a person does
// and keeps the reading short.
const maxCardinalDigits = 18

// underHundred spells 0 <= n < 100.
func underHundred(n int) string {
	if n < 20 {
		return onesWords[n]
	}
	if n%10 == 0 {
		return tensWords[n/10]
	}
	return tensWords[n/10] + "-" + onesWords[n%10]
}

// underThousand spells 0 < n < 1000 (American style: no "and").
func underThousand(n int) string {
	if n < 100 {
		return underHundred(n)
	}
	s := onesWords[n/100] + " hundred"
	if n%100 != 0 {
		s += " " + underHundred(n%100)
	}
	return s
}

// cardinal spells a non-negative integer in words.
func cardinal(n uint64) string {
	if n == 0 {
		return "zero"
	}
	var groups []string
	for scale := 0; n > 0; scale++ {
		g := int(n % 1000)
		n /= 1000
		if g == 0 {
			continue
		}
		w := underThousand(g)
		if scaleWords[scale] != "" {
			w += " " + scaleWords[scale]
		}
		groups = append(groups, w)
	}
	for i, j := 0, len(groups)-1; i < j; i, j = i+1, j-1 {
		groups[i], groups[j] = groups[j], groups[i]
	}
	return strings.Join(groups, " ")
}

// cardinalGroups spells a digit string of any length up to 36 digits, three digits at a time. It
// serves numbers written with group commas ("100,000,000,000,000,000,000"), which the writer meant
// as a quantity however long; longer strings are read digit by digit.
func cardinalGroups(digits string) string {
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "zero"
	}
	if len(digits) > 3*len(scaleWords) || !isASCIIDigits(digits) {
		return spellDigits(digits)
	}
	var words []string
	first := len(digits) % 3
	if first == 0 {
		first = 3
	}
	for start, end := 0, first; start < len(digits); start, end = end, end+3 {
		g, _ := parseDigits(digits[start:end])
		if g == 0 {
			continue
		}
		w := underThousand(int(g))
		if scale := (len(digits) - end) / 3; scale > 0 {
			w += " " + scaleWords[scale]
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// parseDigits converts an ASCII digit string of at most maxCardinalDigits digits.
func parseDigits(digits string) (uint64, bool) {
	if digits == "" || len(digits) > maxCardinalDigits {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// spellDigits reads each digit on its own: "007" -> "zero zero seven".
func spellDigits(digits string) string {
	var b strings.Builder
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(onesWords[c-'0'])
	}
	return b.String()
}

// cardinalDigits spells a digit string as a number: "1234" -> "one thousand two
// hundred thirty-four". Strings with leading zeros ("007") or too many digits are
// read digit by digit, because that is how people read codes.
func cardinalDigits(digits string) string {
	if len(digits) > 1 && digits[0] == '0' {
		return spellDigits(digits)
	}
	n, ok := parseDigits(digits)
	if !ok {
		return spellDigits(digits)
	}
	return cardinal(n)
}

// irregularOrdinals maps the last word of a cardinal to its ordinal form where adding
// "th" is wrong.
var irregularOrdinals = map[string]string{
	"zero": "zeroth", "one": "first", "two": "second", "three": "third", "five": "fifth",
	"eight": "eighth", "nine": "ninth", "twelve": "twelfth",
}

// ordinalWords turns spelled cardinal words into their ordinal: "twenty-one" -> "twenty-first".
func ordinalWords(words string) string {
	cut := strings.LastIndexAny(words, " -") + 1
	head, last := words[:cut], words[cut:]
	if o, ok := irregularOrdinals[last]; ok {
		return head + o
	}
	if strings.HasSuffix(last, "y") {
		return head + strings.TrimSuffix(last, "y") + "ieth"
	}
	return head + last + "th"
}

// ordinal spells n as an ordinal: 22 -> "twenty-second".
func ordinal(n uint64) string { return ordinalWords(cardinal(n)) }

// pluralWords makes spelled number words plural: "nineteen eighty" -> "nineteen eighties",
// "six" -> "sixes".
func pluralWords(words string) string {
	switch {
	case strings.HasSuffix(words, "y"):
		return strings.TrimSuffix(words, "y") + "ies"
	case strings.HasSuffix(words, "x"), strings.HasSuffix(words, "s"):
		return words + "es"
	}
	return words + "s"
}

// year reads a year the way English speakers do: 1984 -> "nineteen eighty-four",
// 1905 -> "nineteen oh five", 1900 -> "nineteen hundred", 2005 -> "two thousand five",
// 2024 -> "twenty twenty-four", 800 -> "eight hundred".
func year(n uint64) string {
	if n < 1000 || n >= 10000 || n%1000 == 0 || (n >= 2000 && n < 2010) {
		return cardinal(n)
	}
	hi, lo := int(n/100), int(n%100)
	switch {
	case lo == 0:
		return underHundred(hi) + " hundred"
	case lo < 10:
		return underHundred(hi) + " oh " + onesWords[lo]
	}
	return underHundred(hi) + " " + underHundred(lo)
}

// fractionalDigits reads the digits after a decimal point one by one.
func fractionalDigits(digits string) string { return spellDigits(digits) }

// decimalWords reads "3.14" style numbers: integer part as a cardinal, the rest digit by digit.
// intPart may be empty (".5" -> "point five").
func decimalWords(intPart, fracPart string) string {
	if fracPart == "" {
		return cardinalDigits(intPart)
	}
	if intPart == "" {
		return "point " + fractionalDigits(fracPart)
	}
	return cardinalDigits(intPart) + " point " + fractionalDigits(fracPart)
}
