package edge

import "github.com/addrwatch/addrwatch/actors"

// The codes only the HTTP edge gives: a request refused before it reaches
// an operation, each named after its HTTP status.
const (
	CodeBadRequest          actors.Code = "BAD_REQUEST"
	CodeURITooLong          actors.Code = "URI_TOO_LONG"
	CodeHeadersTooLarge     actors.Code = "REQUEST_HEADER_FIELDS_TOO_LARGE"
	CodeVersionNotSupported actors.Code = "HTTP_VERSION_NOT_SUPPORTED"
)
