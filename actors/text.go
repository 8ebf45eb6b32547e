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

// isNoteText reports whether s is acceptable free text for a card note:
// printable characters plus newline and tab.
func isNoteText(s string) bool {
	for _, r := range s {
		if r != '\n' && r != '\t' && !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// charCount counts code points, the spec's unit for text limits.
func charCount(s string) int { return utf8.RuneCountInString(s) }
