package chain

import "slices"

// The altcoin registry: the coins an `altcoin` Space may watch, each with the
// rules that check its addresses. ALTCOINS.md lists the rules and the test
// vectors behind them. Each coin's checks live in their own file
// (altcoin_<coin>.go); this file holds the registry and the input hygiene
// every coin shares.

// UnknownCoinID is the coin_id for an address of a coin the registry does not
// list. Its text is checked by ValidateUnknownAddress, not by a Coin.
const UnknownCoinID = "unknown"

// Reasons carried by *AddressError for altcoin addresses, in addition to the
// shared ones in bitcoin.go (empty, spaces, too long, mixed case, checksum).
// Like those, they never include the rejected input.
const (
	reasonUnknownCoin     = "this coin is not supported"
	reasonAltUnsupported  = "this kind of address is not supported for this coin"
	reasonNotEthereum     = "not an Ethereum address"
	reasonNotLitecoin     = "not a Litecoin mainnet address"
	reasonNotDogecoin     = "not a Dogecoin mainnet address"
	reasonNotBitcoinCash  = "not a Bitcoin Cash address"
	reasonCashAddrLegacy  = "legacy Bitcoin-style addresses are not accepted for Bitcoin Cash; use the CashAddr form (bitcoincash:q... or p...)"
	reasonNotTron         = "not a TRON address"
	reasonNotSolana       = "not a Solana address"
	reasonNotXRP          = "not an XRP classic address (r...)"
	reasonTextNotUTF8     = "address is not valid UTF-8 text"
	reasonTextMarkup      = "address must not contain angle brackets, ampersands, quotes, backticks or backslashes"
	reasonTextInvisible   = "address contains control or invisible formatting characters"
	reasonTextUnprintable = "address contains a character that cannot be printed"
)

// Coin is a supported altcoin.
type Coin struct {
	ID       string // stable id used in the API's coin_id, e.g. "ethereum"
	Name     string // display name, e.g. "Ethereum"
	validate func(string) (string, error)
}

// coins is the registry, sorted by ID. Coins hands out copies, so nothing
// outside this file can change it.
var coins = []Coin{
	{ID: "bitcoin-cash", Name: "Bitcoin Cash", validate: withHygiene(cashAddrCharsMax, validateBitcoinCash)},
	{ID: "dogecoin", Name: "Dogecoin", validate: withHygiene(base58Hash160CharsMax, validateDogecoin)},
	{ID: "ethereum", Name: "Ethereum", validate: withHygiene(ethereumAddressChars, validateEthereum)},
	{ID: "litecoin", Name: "Litecoin", validate: withHygiene(litecoinAddressCharsMax, validateLitecoin)},
	{ID: "solana", Name: "Solana", validate: withHygiene(solanaAddressCharsMax, validateSolana)},
	{ID: "tron", Name: "TRON", validate: withHygiene(base58Hash160CharsMax, validateTron)},
	{ID: "xrp", Name: "XRP", validate: withHygiene(xrpAddressCharsMax, validateXRP)},
}

// Coins returns the supported coins sorted by ID.
func Coins() []Coin {
	return slices.Clone(coins)
}

// LookupCoin finds a coin by its ID (exact, case-sensitive).
// UnknownCoinID is not a coin: it is never found here.
func LookupCoin(id string) (Coin, bool) {
	for _, c := range coins {
		if c.ID == id {
			return c, true
		}
	}
	return Coin{}, false
}

// Validate checks an address of this coin and returns its canonical form
// (used to detect duplicates). Every coin rejects empty input, input longer
// than its longest address (before any decoding, so huge inputs cost
// nothing) and input with surrounding whitespace. A zero Coin, one not from
// the registry, rejects everything. Errors are always *AddressError.
func (c Coin) Validate(address string) (canonical string, err error) {
	if c.validate == nil {
		return "", addrErr(reasonUnknownCoin)
	}
	return c.validate(address)
}

// altcoinInputBytesMax bounds any input before it is looked at: above every
// coin's longest address (90 characters) with room for stray whitespace
// around it, which should be reported as whitespace, not as length.
const altcoinInputBytesMax = 128

// withHygiene wraps a coin's validator in the checks every coin shares
// (checkInputHygiene, which ValidateBitcoinAddress starts with too), then
// refuses an input longer than addressCharsMax, the coin's longest
// address; all supported addresses are ASCII, so bytes are characters.
func withHygiene(addressCharsMax int, validate func(string) (string, error)) func(string) (string, error) {
	return func(s string) (string, error) {
		if err := checkInputHygiene(s, altcoinInputBytesMax); err != nil {
			return "", err
		}
		if len(s) > addressCharsMax {
			return "", addrErr(reasonTooLong)
		}
		return validate(s)
	}
}

// digitTable maps each byte of alphabet, an encoding's ASCII digits in
// order, to its value, and every other byte to -1.
func digitTable(alphabet string) (digits [256]int8) {
	for i := range digits {
		digits[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		digits[alphabet[i]] = int8(i)
	}
	return digits
}

// hasMixedCaseASCII reports whether s holds both ASCII lower- and
// upper-case letters.
func hasMixedCaseASCII(s string) bool {
	var lower, upper bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		lower = lower || 'a' <= c && c <= 'z'
		upper = upper || 'A' <= c && c <= 'Z'
	}
	return lower && upper
}
