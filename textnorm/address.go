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
	var words []string
	for len(rest) > 0 {
		r, size := utf8.DecodeRuneInString(rest)
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			end := len(rest)
			for j, c := range rest {
				if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
					end = j
					break
				}
			}
			words = append(words, addressPart(rest[:end])...)
			rest = rest[end:]
			continue
		}
		if name, ok := symbolNames[r]; ok {
			words = append(words, name)
		} else {
			words = append(words, string(r))
		}
		rest = rest[size:]
	}
	return strings.Join(words, " "), len(words) > 0
}

// addressPart reads one alphanumeric run of an address: letters as written ("www" spelled out),
// digits one by one.
func addressPart(part string) []string {
	if strings.EqualFold(part, "www") {
		return []string{"w w w"}
	}
	var out []string
	for part != "" {
		r, _ := utf8.DecodeRuneInString(part)
		digits := isDigit(r)
		end := len(part)
		for j, c := range part {
			if isDigit(c) != digits {
				end = j
				break
			}
		}
		if digits {
			out = append(out, spellDigits(part[:end]))
		} else {
			out = append(out, part[:end])
		}
		part = part[end:]
	}
	return out
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
