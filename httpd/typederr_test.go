package httpd

import "github.com/addrwatch/addrwatch/actors"

// typedErr is the spec error of err, or nil for nil, so a test can read
// its code and message.
func typedErr(err error) *actors.Error {
	if err == nil {
		return nil
	}
	return specError(err)
}
