// Package plural writes counts of things in English: "0 items", "1 item", "2 items".
package plural

import "strconv"

// Count is n followed by noun, made plural unless n is 1 ("1 item", "0 items"). noun is a regular English noun, or
// a phrase ending in one ("temp file"); Count adds "s" (or "es" after s, x, z, ch, sh).
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Noun(n, noun)
}

// Noun is noun as n of it is written: noun itself for 1, its plural otherwise.
func Noun(n int, noun string) string {
	if n == 1 || n == -1 {
		return noun
	}
	for _, end := range []string{"s", "x", "z", "ch", "sh"} {
		if len(noun) >= len(end) && noun[len(noun)-len(end):] == end {
			return noun + "es"
		}
	}
	return noun + "s"
}
