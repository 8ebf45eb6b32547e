package send

import (
	"mime"
	"strings"
	"unicode"
)

// Bounds of the text this package puts in front of people.
const (
	// cardNameRunesMax bounds the card's name in a title or a line: a
	// notification's title is read at a glance.
	cardNameRunesMax = 64
	// detailRunesMax bounds an Outcome's Detail.
	detailRunesMax = 300
)

// oneLine is s as one line of plain text of at most maxRunes runes:
// every rune that is not printable (controls, CR and LF among them, and
// the format characters that reorder text on screen) becomes a space,
// runs of spaces become one, and a cut is marked with an ellipsis.
// Invalid UTF-8 has become U+FFFD by then.
func oneLine(s string, maxRunes int) string {
	out := make([]rune, 0, min(len(s), 4*maxRunes))
	space := false
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if len(out) > maxRunes {
			// One rune over is enough to know it must be cut.
			return string(out[:maxRunes-1]) + "…"
		}
	}
	return string(out)
}

// headerValue is text made safe as the value of a header of its own (an
// HTTP header to ntfy, a mail header): one line (oneLine), then, when it
// is not plain ASCII, encoded as RFC 2047 encoded-words, which both ntfy
// and mail readers decode. A header can hold nothing that starts another.
//
// "=?" starts an encoded-word even in plain ASCII, so owner text holding
// it would be decoded by the reader into whatever it encodes (a line
// break, say): a space is put between the two characters first.
func headerValue(text string, maxRunes int) string {
	s := strings.ReplaceAll(oneLine(text, maxRunes), "=?", "= ?")
	return mime.QEncoding.Encode("utf-8", s)
}
