package httpd

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

const (
	// bodyBytesMax is the server-wide cap, the largest body any route
	// takes; fasthttp refuses more before a handler runs.
	bodyBytesMax = max(sheetBodyBytesMax, labelFileBytesMax)
	// cardBodyBytesMax bounds the body of card and account routes.
	cardBodyBytesMax = 64 << 10
	// fieldNameBytesMax bounds a field name echoed in an error message.
	fieldNameBytesMax = 64
)

// decodeBody decodes a JSON object body into dst strictly: the content type
// must be JSON, member names match exactly (case included) and at most
// once, unknown members, invalid UTF-8 and trailing data are refused, and
// each failure is a 422 that names the field but never echoes a value.
func decodeBody(ctx *fasthttp.RequestCtx, dst any, bytesMax int) error {
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
	if err := jsonv2.Unmarshal(body, dst, jsonv2.RejectUnknownMembers(true)); err != nil {
		return actors.Errorf(actors.CodeValidation, "%s", describeJSONError(err))
	}
	return nil
}

func requireJSONContentType(ctx *fasthttp.RequestCtx) error {
	mt, _, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || mt != "application/json" {
		return actors.Errorf(actors.CodeValidation, "Content-Type must be application/json")
	}
	return nil
}

// describeJSONError turns a decoding error into a message for the client
// that names the field (by its JSON pointer) but never echoes a value.
func describeJSONError(err error) string {
	var semantic *jsonv2.SemanticError
	var syntactic *jsontext.SyntacticError
	switch {
	case errors.As(err, &semantic):
		field := fieldName(semantic.JSONPointer)
		switch {
		case errors.Is(semantic.Err, jsonv2.ErrUnknownName):
			return "unknown field " + field
		case field == `""`:
			return "request body must be a JSON object"
		}
		return fmt.Sprintf("field %s must be %s", field, jsonTypeName(semantic.GoType))
	case errors.As(err, &syntactic):
		switch {
		case errors.Is(syntactic.Err, jsontext.ErrDuplicateName):
			return "field " + fieldName(syntactic.JSONPointer) + " appears more than once"
		case strings.Contains(syntactic.Err.Error(), "invalid UTF-8"):
			return "request body is not valid UTF-8"
		case strings.Contains(syntactic.Err.Error(), "after top-level value"):
			return "request body must hold exactly one JSON object"
		case errors.Is(syntactic.Err, io.ErrUnexpectedEOF):
			return "request body is not valid JSON (it ends early)"
		}
		return fmt.Sprintf("request body is not valid JSON (at byte %d)", syntactic.ByteOffset)
	}
	return "request body is not valid JSON"
}

// fieldName renders a JSON pointer such as /rows/3/index as a quoted
// field path, bounded so a huge member name is not echoed back.
func fieldName(pointer jsontext.Pointer) string {
	name := strings.TrimPrefix(string(pointer), "/")
	if len(name) > fieldNameBytesMax {
		name = name[:fieldNameBytesMax] + "…"
	}
	return fmt.Sprintf("%q", name)
}

// jsonTypeName names the JSON type a Go field expects.
func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "of the documented type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "of the documented type"
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
func required(field string) error {
	return actors.Errorf(actors.CodeValidation, "field %q is required", field)
}
