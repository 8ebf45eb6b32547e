package actors

import "github.com/addrwatch/addrwatch/chain"

// cardAddress validates a card's address for where it will live and
// returns its canonical form. Portfolio and bitcoin Spaces take Bitcoin
// addresses of the account's network and no coin; altcoin Spaces take a listed coin's
// address, or safe text with coin "unknown"; Sheet Spaces hold no cards.
func cardAddress(network chain.Network, t SpaceType, coinID *string, address string) (canonical, coin string, err *Error) {
	switch t {
	case SpaceBitcoin:
		if coinID != nil {
			return "", "", Errorf(CodeValidation, "coin_id applies only to altcoin Spaces")
		}
		canonical, addrErr := chain.ValidateBitcoinAddressOn(address, network)
		if addrErr != nil {
			return "", "", Errorf(CodeValidation, "address: %s", addrErr.Error())
		}
		return canonical, "", nil
	case SpaceAltcoin:
		if coinID == nil {
			return "", "", Errorf(CodeValidation, `field "coin_id" is required in an altcoin Space`)
		}
		var addrErr error
		if *coinID == chain.UnknownCoinID {
			canonical, addrErr = chain.ValidateUnknownAddress(address)
		} else if coin, listed := chain.LookupCoin(*coinID); listed {
			canonical, addrErr = coin.Validate(address)
		} else {
			return "", "", Errorf(CodeValidation, "coin_id must be a supported coin or %q", chain.UnknownCoinID)
		}
		if addrErr != nil {
			return "", "", Errorf(CodeValidation, "address: %s", addrErr.Error())
		}
		return canonical, *coinID, nil
	}
	return "", "", Errorf(CodeValidation, "a Sheet Space holds rows, not cards")
}

// hasAddress reports whether cards already hold this coin and address.
func hasAddress(cards []*Card, coin, canonical string) bool {
	for _, c := range cards {
		if c.CoinID == coin && c.Address == canonical {
			return true
		}
	}
	return false
}

var errDuplicateAddress = Errorf(CodeDuplicateAddress, "a card with this address already exists here")
