package edge

import "strings"

// BearerToken returns the token of an "Authorization: Bearer" header: the
// scheme in any case, then the token with the space around it trimmed.
// Every room reads its credential with it (API keys, owner secrets,
// sessions, the operator token).
func BearerToken(header []byte) (string, bool) {
	const scheme = "bearer "
	if len(header) <= len(scheme) || !strings.EqualFold(string(header[:len(scheme)]), scheme) {
		return "", false
	}
	return strings.TrimSpace(string(header[len(scheme):])), true
}
