package actors

import (
	"unicode"
	"unicode/utf8"
)

// isPrintable reports whether s holds only printable characters: no control
// characters (not even newline) and no invisible format characters.
func isPrintable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// isPlainText reports whether s is plain text, the rule for card notes and
// Sheet cells: printable characters plus newline and tab. Like names, it
// refuses control characters (a terminal escape starts with one) and
// invisible format characters (bidi overrides, zero-width spaces), which
// would make stored text show differently from what it holds.
func isPlainText(s string) bool {
	for _, r := range s {
		if r != '\n' && r != '\t' && !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// charCount counts code points, the spec's unit for text limits.
func charCount(s string) int { return utf8.RuneCountInString(s) }
