package httpd

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

const (
	// bodyBytesMax is the server-wide cap; fasthttp refuses more before a
	// handler runs.
	bodyBytesMax = 2 << 20
	// cardBodyBytesMax bounds the body of card and account routes.
	cardBodyBytesMax = 64 << 10
	// fieldNameBytesMax bounds a field name echoed in an error message.
	fieldNameBytesMax = 64
)

// decodeBody decodes a JSON object body into dst strictly: the content type
// must be JSON, unknown fields and trailing data are refused, and each
// failure is a 422 that says what was wrong.
func decodeBody(ctx *fasthttp.RequestCtx, dst any, bytesMax int) *actors.Error {
	body := ctx.PostBody()
	if len(body) > bytesMax {
		return actors.Errorf(actors.CodeValidation, "request body exceeds %d bytes", bytesMax)
	}
	if err := requireJSONContentType(ctx); err != nil {
		return err
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return actors.Errorf(actors.CodeValidation, "a JSON object body is required")
	}
	if trimmed[0] != '{' {
		return actors.Errorf(actors.CodeValidation, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return actors.Errorf(actors.CodeValidation, "%s", describeJSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return actors.Errorf(actors.CodeValidation, "request body must hold exactly one JSON object")
	}
	return nil
}

func requireJSONContentType(ctx *fasthttp.RequestCtx) *actors.Error {
	mt, _, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || mt != "application/json" {
		return actors.Errorf(actors.CodeValidation, "Content-Type must be application/json")
	}
	return nil
}

// describeJSONError turns a decoding error into a message for the client
// that names the field but never echoes its value.
func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return "request body must be a JSON object"
		}
		return fmt.Sprintf("field %q must be of type %s", typeErr.Field, jsonTypeName(typeErr.Type.String()))
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("request body is not valid JSON (at byte %d)", syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "request body is not valid JSON (it ends early)"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		if len(name) > fieldNameBytesMax {
			return "unknown field in request body"
		}
		return "unknown field " + name
	}
	return "request body is not valid JSON"
}

func jsonTypeName(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int64", "uint64", "float64":
		return "number"
	}
	return "the documented type"
}

// canonicalBodyHash hashes the canonical form of a JSON body (keys sorted,
// no insignificant whitespace), so that an idempotent retry that reorders
// or reformats its JSON is still the same request. An empty body hashes as
// empty.
func canonicalBodyHash(body []byte) actors.Hash {
	if len(bytes.TrimSpace(body)) == 0 {
		return sha256.Sum256(nil)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return sha256.Sum256(body)
	}
	canonical, err := json.Marshal(v)
	if err != nil {
		return sha256.Sum256(body)
	}
	return sha256.Sum256(canonical)
}

// required reports a missing required field.
func required(field string) *actors.Error {
	return actors.Errorf(actors.CodeValidation, "field %q is required", field)
}
