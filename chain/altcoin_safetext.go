package chain

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the text kept for an address of a coin the registry does not
// list. The byte limit is checked first, before the text is decoded.
const (
	unknownAddressCharsMax = 128
	unknownAddressBytesMax = unknownAddressCharsMax * utf8.UTFMax
)

// unknownAddressMarkupChars are the characters that mean something in HTML,
// in quoted strings or in shells. Refusing them keeps the stored text inert
// wherever it is shown or copied.
const unknownAddressMarkupChars = "<>&\"'`\\"

// ValidateUnknownAddress checks the text given with coin_id "unknown": it
// must be "safe text". Safe text is 1 to 128 characters (Unicode code
// points) of valid UTF-8, with no whitespace at either end, where every
// character is printable (unicode.IsPrint: letters, marks, numbers,
// punctuation, symbols and the ASCII space; so no other space characters
// inside either), none is one of the markup and quoting characters
// < > & " ' ` \ and none is a control or format character (such as bidi
// overrides or zero-width characters, which also rules out emoji joined with
// a zero-width joiner). Nothing about the coin can be checked, so the
// canonical form is the text unchanged. Errors are always *AddressError.
func ValidateUnknownAddress(s string) (canonical string, err error) {
	if err := checkInputHygiene(s, unknownAddressBytesMax); err != nil {
		return "", err
	}
	if !utf8.ValidString(s) {
		return "", addrErr(reasonTextNotUTF8)
	}
	if utf8.RuneCountInString(s) > unknownAddressCharsMax {
		return "", addrErr(reasonTooLong)
	}
	for _, r := range s {
		switch {
		case strings.ContainsRune(unknownAddressMarkupChars, r):
			return "", addrErr(reasonTextMarkup)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return "", addrErr(reasonTextInvisible)
		case !unicode.IsPrint(r):
			return "", addrErr(reasonTextUnprintable)
		}
	}
	return s, nil
}
