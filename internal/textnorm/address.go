package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// topLevelDomains are the endings that make "word.tld" a web address when there is no "www." or
// scheme; limited to common ones so that "Node.js" or "file.txt" stay words.
var topLevelDomains = setOf("com", "org", "net", "edu", "gov", "mil", "int", "io", "co", "uk", "us", "de", "fr",
	"jp", "cn", "ru", "au", "ca", "info", "biz", "ai", "app", "dev", "me", "tv", "eu", "nl", "se", "es", "ch", "in",
	"ly", "gg", "xyz", "online", "site", "tech")

// symbolNames are how the punctuation inside addresses is read.
var symbolNames = map[rune]string{
	'.': "dot", '/': "slash", '-': "dash", '_': "underscore", ':': "colon", '?': "question mark",
	'=': "equals", '&': "and", '#': "hash", '~': "tilde", '%': "percent", '+': "plus", '@': "at",
	'\\': "backslash", '!': "exclamation mark", '*': "star", ',': "comma", ';': "semicolon", '$': "dollar",
}

// spellAddress reads URLs ("https://www.example.com/a" -> "w w w dot example dot com slash a") and
// e-mail addresses ("john@example.org" -> "john at example dot org"). The scheme is not read:
// listeners never need "h t t p s colon slash slash".
func spellAddress(core string) (string, bool) {
	lower := strings.ToLower(core)
	rest := core
	isURL := false
	for _, scheme := range []string{"https://", "http://", "ftp://"} {
		if strings.HasPrefix(lower, scheme) {
			rest, isURL = core[len(scheme):], true
			break
		}
	}
	if !isURL {
		switch {
		case strings.HasPrefix(lower, "www.") && len(core) > 4:
			isURL = true
		case isEmail(core):
			isURL = true
		case looksLikeDomain(core):
			isURL = true
		}
	}
	if !isURL || rest == "" {
		return "", false
	}
	rest = strings.TrimRight(rest, "/")
	var b strings.Builder
	b.Grow(2 * len(rest))
	word := func(w string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	for len(rest) > 0 {
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case strings.EqualFold(rest[:min(3, len(rest))], "www") && (len(rest) == 3 || rest[3] == '.'):
			word("w w w")
			size = 3
		case isDigit(r):
			// Digits one by one: "8080" is "eight zero eight zero" in an address.
			word(onesWords[r-'0'])
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			end := len(rest)
			for j, c := range rest {
				if isDigit(c) || !unicode.IsLetter(c) && !unicode.IsDigit(c) {
					end = j
					break
				}
			}
			word(rest[:end])
			size = end
		default:
			if name, ok := symbolNames[r]; ok {
				word(name)
			} else {
				word(rest[:size])
			}
		}
		rest = rest[size:]
	}
	return b.String(), b.Len() > 0
}

// isEmail reports "local@domain.tld".
func isEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || strings.Contains(domain, "@") {
		return false
	}
	dot := strings.LastIndexByte(domain, '.')
	return dot > 0 && dot < len(domain)-1 && isLetters(domain[dot+1:])
}

// looksLikeDomain reports "example.com" or "example.co.uk/path": letters, digits and hyphens in
// dot-separated labels ending with a known top-level domain.
func looksLikeDomain(s string) bool {
	host, _, _ := strings.Cut(s, "/")
	labels := strings.Split(host, ".")
	if len(labels) < 2 || !topLevelDomains[strings.ToLower(labels[len(labels)-1])] {
		return false
	}
	for _, l := range labels {
		if l == "" {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '-') {
				return false
			}
		}
	}
	return true
}
