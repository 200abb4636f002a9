package textnorm

import (
	"strings"
	"unicode/utf8"
)

// currency describes how to read an amount in one currency.
type currency struct {
	unit, units, sub, subs string // sub is empty when amounts are read with "point"
}

var (
	dollar = &currency{"dollar", "dollars", "cent", "cents"}
	pound  = &currency{"pound", "pounds", "penny", "pence"}
	euro   = &currency{"euro", "euros", "cent", "cents"}
	yen    = &currency{"yen", "yen", "", ""}
	rupee  = &currency{"rupee", "rupees", "", ""}
	won    = &currency{"won", "won", "", ""}
)

func currencyOf(r rune) *currency {
	switch r {
	case '$':
		return dollar
	case '£':
		return pound
	case '€':
		return euro
	case '¥':
		return yen
	case '₹':
		return rupee
	case '₩':
		return won
	}
	return nil
}

// scaleSuffixes are the abbreviations written right after an amount: "$5M", "$3bn".
var scaleSuffixes = map[string]string{
	"k": "thousand", "K": "thousand", "m": "million", "M": "million", "mn": "million", "mm": "million",
	"b": "billion", "B": "billion", "bn": "billion", "t": "trillion", "T": "trillion", "tn": "trillion",
}

var scaleNames = setOf("hundred", "thousand", "million", "billion", "trillion")

// spacedScales are the abbreviations of a scale that stand apart from the amount: "$1.2 bn".
var spacedScales = map[string]string{"bn": "billion", "mn": "million", "tn": "trillion", "bln": "billion",
	"mln": "million"}

// perUnits are what a price is per, written after a slash: "$15/hr", "$1,200/mo", "$1.50/lb".
var perUnits = map[string]string{"hr": "hour", "hrs": "hour", "h": "hour", "hour": "hour", "min": "minute",
	"minute": "minute", "day": "day", "night": "night", "wk": "week", "week": "week", "mo": "month",
	"mth": "month", "month": "month", "yr": "year", "year": "year", "annum": "annum", "lb": "pound",
	"oz": "ounce", "kg": "kilogram", "g": "gram", "l": "liter", "gal": "gallon", "ft": "foot", "sqft": "square foot",
	"m": "meter", "km": "kilometer", "mi": "mile", "person": "person", "pp": "person", "head": "head",
	"user": "user", "seat": "seat", "unit": "unit", "item": "item", "gb": "gigabyte", "tb": "terabyte",
	"page": "page", "word": "word", "class": "class", "session": "session", "lesson": "lesson"}

// money reads "$5", "$3.50", "-$5", "$2.5 million", "$5M", "5¢".
func (n *normalizer) money(i int) (string, int, bool) {
	core := n.toks[i].core
	negative := false
	if rest, ok := strings.CutPrefix(core, "-"); ok {
		negative, core = true, rest
	} else if rest, ok := strings.CutPrefix(core, "−"); ok {
		negative, core = true, rest
	}
	if amount, ok := strings.CutSuffix(core, "¢"); ok {
		lit, rest, ok := scanNumber(amount, false)
		if !ok || rest != "" {
			return "", 0, false
		}
		w := lit.words() + " " + plural(lit, "cent", "cents")
		if negative {
			w = "minus " + w
		}
		return w, 1, true
	}
	for _, prefix := range []string{"US", "A", "C", "NZ", "HK", "S"} {
		if rest, ok := strings.CutPrefix(core, prefix+"$"); ok {
			core = "$" + rest // "US$5": the country is dropped, the amount is what matters
			break
		}
	}
	r, size := utf8.DecodeRuneInString(core)
	cur := currencyOf(r)
	if cur == nil {
		return "", 0, false
	}
	lit, rest, ok := scanNumber(core[size:], false)
	if !ok {
		return "", 0, false
	}
	if len(rest) == 3 && rest[0] == ',' && isASCIIDigits(rest[1:]) && !lit.hasPoint {
		// A decimal comma, as in "€29,99": three digits would have been a thousands group.
		lit.hasPoint, lit.fracPart, rest = true, rest[1:], ""
	}
	per := ""
	if unit, ok := strings.CutPrefix(rest, "/"); ok { // "$15/hr"
		if per = perUnits[strings.ToLower(unit)]; per == "" {
			return "", 0, false
		}
		rest = ""
	}
	used := 1
	scale := scaleSuffixes[rest]
	switch {
	case scale != "":
	case rest == "":
		scale, used = n.scaleAfter(i)
	default:
		if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "–") {
			return n.moneyRange(i, cur, lit, rest, negative)
		}
		return "", 0, false
	}
	var w string
	switch {
	case scale != "":
		w = lit.words() + " " + scale + " " + cur.units
	case cur.sub != "" && lit.hasPoint && len(lit.fracPart) <= 2:
		w = unitsAndSubunits(cur, lit)
	default:
		w = lit.words() + " " + plural(lit, cur.unit, cur.units)
	}
	if negative {
		w = "minus " + w
	}
	if per != "" {
		w += " per " + per
	}
	return w, used, true
}

// scaleAfter is the scale word (or its spaced abbreviation) after an amount at token i, "$2.5 million", "$1.2 bn",
// and the tokens the amount and it cover; "" and 1 where there is none.
func (n *normalizer) scaleAfter(i int) (string, int) {
	if !n.joinable(i) {
		return "", 1
	}
	lw := strings.ToLower(n.toks[i+1].core)
	if scaleNames[lw] {
		return lw, 2
	}
	if s := spacedScales[lw]; s != "" {
		return s, 2
	}
	return "", 1
}

// moneyRange reads "$5-10" as "five to ten dollars", and with a scale, "$2-3 billion" and "£1-2m", as "two to
// three billion dollars".
func (n *normalizer) moneyRange(i int, cur *currency, from numberLit, rest string, negative bool) (string, int, bool) {
	_, size := utf8.DecodeRuneInString(rest)
	rest = strings.TrimPrefix(rest[size:], "$")
	to, tail, ok := scanNumber(rest, false)
	if !ok || negative {
		return "", 0, false
	}
	scale, used := scaleSuffixes[tail], 1
	switch {
	case scale != "":
	case tail == "":
		scale, used = n.scaleAfter(i)
	default:
		return "", 0, false
	}
	if scale != "" {
		scale += " "
	}
	return from.words() + " to " + to.words() + " " + scale + cur.units, used, true
}

// unitsAndSubunits reads "3.50" as "three dollars and fifty cents" and "0.50" as "fifty cents".
func unitsAndSubunits(cur *currency, lit numberLit) string {
	frac := lit.fracPart
	if len(frac) == 1 {
		frac += "0" // "$3.5" means three fifty
	}
	sub, _ := parseDigits(frac)
	whole := strings.TrimLeft(lit.intPart, "0")
	var parts []string
	if whole != "" || sub == 0 {
		if whole == "" {
			whole = "0"
		}
		unit := cur.units
		if whole == "1" {
			unit = cur.unit
		}
		parts = append(parts, cardinalDigits(whole)+" "+unit)
	}
	if sub > 0 {
		name := cur.subs
		if sub == 1 {
			name = cur.sub
		}
		parts = append(parts, cardinal(sub)+" "+name)
	}
	return strings.Join(parts, " and ")
}
