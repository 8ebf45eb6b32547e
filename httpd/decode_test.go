package httpd

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// leak is a value no error message may repeat: it stands for whatever
// secret or personal data a client put in the wrong place.
const leak = "s3cr3t-VALUE-4f9a"

// requestWith builds a request context with a body and a content type
// ("" leaves the header unset).
func requestWith(contentType string, body []byte) *fasthttp.RequestCtx {
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.Header.SetMethod(fasthttp.MethodPost)
	ctx.Request.SetRequestURI("/v1/portfolio/cards")
	if contentType != "" {
		ctx.Request.Header.SetContentType(contentType)
	}
	ctx.Request.SetBody(body)
	return ctx
}

func TestDecodeBodyAcceptsJSONObjects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		contentType, body string
		want              cardCreateRequest
	}{
		{"application/json", `{"address":"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa","name":"Cold","note":"a\nb","color_key":"teal"}`,
			cardCreateRequest{Address: ptr("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"), Name: ptr("Cold"), Note: ptr("a\nb"), ColorKey: ptr("teal")}},
		{"application/json; charset=utf-8", ` {"address":"x"} `, cardCreateRequest{Address: ptr("x")}},
		{"Application/JSON", "\n{\"address\":\"x\"}\n\n", cardCreateRequest{Address: ptr("x")}},
		{"application/json", `{}`, cardCreateRequest{}},
		{"application/json", `{"address":null,"name":""}`, cardCreateRequest{Name: ptr("")}},
		{"application/json", `{"address":"caf\u00e9"}`, cardCreateRequest{Address: ptr("café")}},
	}
	for _, tc := range cases {
		var got cardCreateRequest
		if err := decodeBody(requestWith(tc.contentType, []byte(tc.body)), &got, cardBodyBytesMax); err != nil {
			t.Errorf("%s %q: %v", tc.contentType, tc.body, err)
			continue
		}
		if g, w := fmt.Sprint(renderRequest(got)), fmt.Sprint(renderRequest(tc.want)); g != w {
			t.Errorf("%q decoded as %s, want %s", tc.body, g, w)
		}
	}
}

// renderRequest renders a cardCreateRequest's fields, "<nil>" for fields not sent.
func renderRequest(r cardCreateRequest) []string {
	var out []string
	for _, p := range []*string{r.Address, r.Name, r.Note, r.ColorKey} {
		if p == nil {
			out = append(out, "<nil>")
		} else {
			out = append(out, fmt.Sprintf("%q", *p))
		}
	}
	return out
}

func TestDecodeBodyRejects(t *testing.T) {
	t.Parallel()
	oversize := []byte(`{"note":"` + strings.Repeat("x", cardBodyBytesMax) + `"}`)
	cases := []struct {
		name, contentType, body string
		// mention is a part of the message that says what was wrong.
		mention string
	}{
		{"no content type", "", `{"address":"x"}`, "Content-Type"},
		{"text/plain", "text/plain", `{"address":"x"}`, "Content-Type"},
		{"form", "application/x-www-form-urlencoded", `address=x`, "Content-Type"},
		{"json suffix type", "application/merge-patch+json", `{"address":"x"}`, "Content-Type"},
		{"json prefix type", "application/jsonx", `{"address":"x"}`, "Content-Type"},
		{"malformed content type", "application/json; charset", `{"address":"x"}`, "Content-Type"},
		{"content type with a secret", "text/" + leak, `{"address":"x"}`, "Content-Type"},
		{"empty body", "application/json", ``, "required"},
		{"whitespace body", "application/json", " \r\n\t ", "required"},
		{"unterminated string", "application/json", `{"address":"` + leak, "not valid JSON"},
		{"unterminated object", "application/json", `{"address":"` + leak + `"`, "not valid JSON"},
		{"missing colon", "application/json", `{"address" "` + leak + `"}`, "not valid JSON"},
		{"bare word", "application/json", leak, "must be a JSON object"},
		{"single quotes", "application/json", `{'address':'` + leak + `'}`, "not valid JSON"},
		{"trailing comma", "application/json", `{"address":"` + leak + `",}`, "not valid JSON"},
		{"number for string", "application/json", `{"address":4815162342}`, `"address"`},
		{"object for string", "application/json", `{"address":{"k":"` + leak + `"}}`, `"address"`},
		{"array for string", "application/json", `{"name":["` + leak + `"]}`, `"name"`},
		{"bool for string", "application/json", `{"color_key":true}`, `"color_key"`},
		{"array body", "application/json", `["` + leak + `"]`, "JSON object"},
		{"string body", "application/json", `"` + leak + `"`, "JSON object"},
		{"number body", "application/json", `42`, "JSON object"},
		{"unknown field", "application/json", `{"address":"x","owner_secret":"` + leak + `"}`, `"owner_secret"`},
		{"field in other case", "application/json", `{"Address":"x","colour":"` + leak + `"}`, `unknown field "Address"`},
		{"two objects", "application/json", `{"address":"x"}{"name":"` + leak + `"}`, "exactly one"},
		{"object then garbage", "application/json", `{"address":"x"} ` + leak, "exactly one"},
		{"object then bracket", "application/json", `{"address":"x"}]`, "exactly one"},
		{"object then null", "application/json", `{"address":"x"} null`, "exactly one"},
		{"oversize", "application/json", string(oversize), "exceeds"},
		{"oversize with a bad type", "text/plain", string(oversize), "exceeds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var dst cardCreateRequest
			err := typedErr(decodeBody(requestWith(tc.contentType, []byte(tc.body)), &dst, cardBodyBytesMax))
			if err == nil {
				t.Fatalf("decodeBody(%q) accepted it as %v", tc.body, renderRequest(dst))
			}
			if err.Code != actors.CodeValidation {
				t.Fatalf("code %s, want VALIDATION", err.Code)
			}
			if StatusOf(err.Code) != fasthttp.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", StatusOf(err.Code))
			}
			if strings.Contains(err.Message, leak) || strings.Contains(err.Message, "4815162342") {
				t.Fatalf("message %q repeats the offending value", err.Message)
			}
			if !strings.Contains(err.Message, tc.mention) {
				t.Fatalf("message %q does not mention %q", err.Message, tc.mention)
			}
		})
	}
}

func TestDecodeBodyTypeNames(t *testing.T) {
	t.Parallel()
	var dst struct {
		Confirm *bool   `json:"confirm"`
		Count   int     `json:"count"`
		Ratio   float64 `json:"ratio"`
		Name    string  `json:"name"`
		List    []string
	}
	cases := map[string]string{
		`{"confirm":"yes"}`: `field "confirm" must be a boolean`,
		`{"count":"3"}`:     `field "count" must be an integer`,
		`{"count":1.5}`:     `field "count" must be an integer`,
		`{"count":1e99}`:    `field "count" must be an integer`,
		`{"ratio":[]}`:      `field "ratio" must be a number`,
		`{"name":1}`:        `field "name" must be a string`,
		`{"List":"x"}`:      `field "List" must be an array`,
	}
	for body, want := range cases {
		err := typedErr(decodeBody(requestWith("application/json", []byte(body)), &dst, cardBodyBytesMax))
		if err == nil || err.Message != want {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

func TestDecodeBodySizeBound(t *testing.T) {
	t.Parallel()
	body := []byte(`{"name":"` + strings.Repeat("n", 100) + `"}`)
	var dst cardCreateRequest
	if err := decodeBody(requestWith("application/json", body), &dst, len(body)); err != nil {
		t.Fatalf("a body of exactly the bound: %v", err)
	}
	err := typedErr(decodeBody(requestWith("application/json", body), &dst, len(body)-1))
	if err == nil || err.Code != actors.CodeValidation || !strings.Contains(err.Message, fmt.Sprint(len(body)-1)) {
		t.Fatalf("a body one byte over the bound: %v", err)
	}
}

// TestDecodeBodyRejectsNull: "null" is not a JSON object, but it decodes
// into a struct as a no-op, so decodeBody accepts it as if it were {}.
// Every route today then refuses the missing required field, so the
// effect is a different message, not a wrong write.
func TestDecodeBodyRejectsNull(t *testing.T) {
	t.Parallel()
	var dst cardCreateRequest
	if err := decodeBody(requestWith("application/json", []byte(`null`)), &dst, cardBodyBytesMax); err == nil {
		t.Fatal(`decodeBody accepted "null" as a JSON object body`)
	}
}

func TestCanonicalBodyHash(t *testing.T) {
	t.Parallel()
	same := [][]string{
		{`{"a":1,"b":[1,2,{"c":"d","e":null}]}`, "{ \"b\" : [1, 2, {\"e\":null, \"c\":\"d\"}],\n\t\"a\" : 1 }\n"},
		{`{"address":"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa","name":"Cold"}`, `{"name":"Cold","address":"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"}`},
		{`{"name":"café"}`, `{"name":"caf\u00e9"}`},
		{`{"note":"<b>&</b>"}`, `{"note":"\u003cb\u003e\u0026\u003c/b\u003e"}`},
		{`{"a":"\/"}`, `{"a":"/"}`},
		{``, " \n\t"},
		{`[3,1,2]`, ` [ 3 , 1 , 2 ] `},
	}
	for _, pair := range same {
		if canonicalBodyHash([]byte(pair[0])) != canonicalBodyHash([]byte(pair[1])) {
			t.Errorf("%q and %q hash differently", pair[0], pair[1])
		}
	}
	different := [][]string{
		{`{"a":1}`, `{"a":2}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":true}`, `{"a":"true"}`},
		{`{"a":null}`, `{}`},
		{`{"a":1}`, `{"a":1,"b":1}`},
		{`{"a":"x"}`, `{"A":"x"}`},
		{`[1,2,3]`, `[3,2,1]`},
		{`{"a":{"b":1}}`, `{"a":{"b":2}}`},
		{`{"a":12345678901234567890}`, `{"a":12345678901234567891}`}, // equal as float64
		{`{"a":""}`, ``},
		{`{"a":1`, `{"a":2`},
		{`{}`, ``},
	}
	for _, pair := range different {
		if canonicalBodyHash([]byte(pair[0])) == canonicalBodyHash([]byte(pair[1])) {
			t.Errorf("%q and %q hash the same", pair[0], pair[1])
		}
	}
	if canonicalBodyHash(nil) != sha256.Sum256(nil) {
		t.Error("an empty body does not hash as empty")
	}
	if invalid := []byte(`{"a":`); canonicalBodyHash(invalid) != sha256.Sum256(invalid) {
		t.Error("invalid JSON is not hashed as its bytes")
	}
}

func TestParseBearerShapes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	cases := []struct {
		token       string
		kind        actors.CredentialKind
		account, id string
	}{
		{"awk.acct1.key1.secret", actors.CredentialAPIKey, "acct1", "key1"},
		{"aws.acct1.secret", actors.CredentialOwnerSecret, "acct1", ""},
		{"awt.acct1.sess1.secret", actors.CredentialSession, "acct1", "sess1"},
	}
	for _, tc := range cases {
		cred, ok := parseBearer(tc.token, now)
		if !ok {
			t.Errorf("parseBearer(%q) refused a valid shape", tc.token)
			continue
		}
		want := actors.Credential{Kind: tc.kind, AccountID: tc.account, ID: tc.id, Hash: sha256.Sum256([]byte(tc.token)), Now: now}
		if cred != want {
			t.Errorf("parseBearer(%q) = %+v, want %+v", tc.token, cred, want)
		}
	}
}

func TestParseBearerAcceptsGeneratedSecrets(t *testing.T) {
	t.Parallel()
	account := newID()
	id, key, hash := newAPIKey(account)
	if cred, ok := parseBearer(key, 1); !ok || cred.Kind != actors.CredentialAPIKey || cred.AccountID != account || cred.ID != id || cred.Hash != hash {
		t.Fatalf("API key %q parsed as %+v, %v", key, cred, ok)
	}
	secret, hash := newOwnerSecret(account)
	if cred, ok := parseBearer(secret, 1); !ok || cred.Kind != actors.CredentialOwnerSecret || cred.AccountID != account || cred.Hash != hash {
		t.Fatalf("owner secret parsed as %+v, %v", cred, ok)
	}
	id, token, hash := newSessionToken(account)
	if cred, ok := parseBearer(token, 1); !ok || cred.Kind != actors.CredentialSession || cred.AccountID != account || cred.ID != id || cred.Hash != hash {
		t.Fatalf("session token parsed as %+v, %v", cred, ok)
	}
	if len(key) > bearerCharsMax || len(token) > bearerCharsMax {
		t.Fatalf("generated secrets are longer than parseBearer accepts: %d, %d", len(key), len(token))
	}
	// 256 random bits each, never repeated.
	if other, _ := newOwnerSecret(account); other == secret {
		t.Fatal("two owner secrets are equal")
	}
}

func TestParseBearerRejects(t *testing.T) {
	t.Parallel()
	long := "aws.acct1." + strings.Repeat("s", bearerCharsMax-len("aws.acct1.")+1)
	if _, ok := parseBearer(long[:bearerCharsMax], 0); !ok {
		t.Fatalf("a token of exactly %d characters was refused", bearerCharsMax)
	}
	rejects := []string{
		"",
		".",
		"...",
		"awk",
		"secret",
		long, // one character over the bound
		// wrong prefix
		"awx.acct1.key1.secret", "AWK.acct1.key1.secret", "Aws.acct1.secret", "awk1.acct1.key1.secret", " aws.acct1.secret",
		"ak.acct1.key1.secret", "bearer.acct1.secret",
		// wrong number of parts for the prefix
		"awk.acct1.secret", "awk.acct1.key1.secret.more", "aws.acct1", "aws.acct1.key1.secret",
		"awt.acct1.secret", "awt.acct1.sess1.secret.more", "aws", "awk.a.b.c.d.e",
		// empty parts
		"awk..key1.secret", "awk.acct1..secret", "awk.acct1.key1.", ".awk.acct1.key1.secret",
		"aws..secret", "aws.acct1.", "aws.acct1.secret.", "awt.acct1..secret", "awt..sess1.secret",
	}
	for _, token := range rejects {
		if cred, ok := parseBearer(token, 0); ok {
			t.Errorf("parseBearer(%q) accepted it as %+v", token, cred)
		} else if cred != (actors.Credential{}) {
			t.Errorf("parseBearer(%q) refused it but returned %+v", token, cred)
		}
	}
}

// TestCredentialAudience runs the whole edge check: header, shape and the
// listener's audience. A blank token after the scheme is refused too.
func TestCredentialAudience(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := New(Config{Now: func() time.Time { return now }})
	cases := []struct {
		header string
		aud    audience
		kind   actors.CredentialKind // 0: refused
	}{
		{"Bearer awk.a.k.s", audienceAgent, actors.CredentialAPIKey},
		{"Bearer awk.a.k.s", audienceOwner, 0},
		{"Bearer aws.a.s", audienceOwner, actors.CredentialOwnerSecret},
		{"Bearer aws.a.s", audienceAgent, 0},
		{"bearer awt.a.i.s", audienceOwner, actors.CredentialSession},
		{"Bearer awt.a.i.s", audienceAgent, 0},
		{"Bearer    ", audienceAgent, 0},
		{"Bearer    ", audienceOwner, 0},
		{"", audienceOwner, 0},
		{"Basic awk.a.k.s", audienceAgent, 0},
	}
	for _, tc := range cases {
		ctx := requestWith("", nil)
		if tc.header != "" {
			ctx.Request.Header.Set(fasthttp.HeaderAuthorization, tc.header)
		}
		cred, failure := s.credential(ctx, tc.aud)
		err := typedErr(failure)
		if tc.kind == 0 {
			if err == nil || err.Code != actors.CodeUnauthorized || StatusOf(err.Code) != 401 {
				t.Errorf("%q for audience %d: %+v, %v; want 401 UNAUTHORIZED", tc.header, tc.aud, cred, err)
			}
			continue
		}
		if err != nil || cred.Kind != tc.kind || cred.Now != now.UnixNano() {
			t.Errorf("%q for audience %d: %+v, %v", tc.header, tc.aud, cred, err)
		}
	}
}

// FuzzDecodeBody checks that no body and content type panic the decoder,
// that every refusal is a VALIDATION error, and that a refusal never
// repeats a string value of the body.
func FuzzDecodeBody(f *testing.F) {
	for _, body := range []string{
		`{"address":"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa","name":"n","note":"x","color_key":"teal"}`,
		`{}`, `null`, `[]`, `""`, `{"address":1}`, `{"x":"y"}`, `{"address":"a"}{}`, `{"address":"a`, " ", "",
		`{"address":"\ud800"}`, `{"name":"` + "\xff\xfe" + `"}`, `{"note":1e400}`,
	} {
		f.Add("application/json", []byte(body))
	}
	f.Add("text/plain", []byte(`{}`))
	f.Add("application/json; charset=utf-8", []byte(`{"address":"x"}`))
	f.Add(`application/json; a="`, []byte(`{}`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		var dst cardCreateRequest
		err := typedErr(decodeBody(requestWith(contentType, body), &dst, 1<<10))
		if err == nil {
			if len(body) > 1<<10 {
				t.Fatalf("accepted %d bytes over a bound of %d", len(body), 1<<10)
			}
			return
		}
		if err.Code != actors.CodeValidation {
			t.Fatalf("refusal with code %s: %v", err.Code, err)
		}
		if err.Message == "" {
			t.Fatal("refusal without a message")
		}
		// A value the client sent (a JSON string of some length) must not
		// come back; field names may, since the message names the field.
		var values map[string]any
		if json.Unmarshal(body, &values) == nil {
			for _, v := range values {
				if s, isString := v.(string); isString && len(s) >= 8 && strings.Contains(err.Message, s) {
					if !strings.Contains(err.Message, "unknown field") {
						t.Fatalf("message %q repeats the value %q", err.Message, s)
					}
				}
			}
		}
	})
}

// FuzzParseBearer checks that no header panics the parser and that any
// accepted token is one of the three shapes, bound to its own hash.
func FuzzParseBearer(f *testing.F) {
	for _, h := range []string{
		"Bearer awk.acct1.key1.secret", "Bearer aws.acct1.secret", "bearer awt.acct1.sess1.secret",
		"Bearer ", "Bearer awk..x.y", "Basic x", "Bearer aws.a.b.c", "BEARER \t aws.a.s \n", "",
	} {
		f.Add([]byte(h))
	}
	f.Fuzz(func(t *testing.T, header []byte) {
		token, ok := edge.BearerToken(header)
		if !ok {
			return
		}
		if token != strings.TrimSpace(token) {
			t.Fatalf("token %q keeps surrounding space", token)
		}
		cred, ok := parseBearer(token, 7)
		if !ok {
			if cred != (actors.Credential{}) {
				t.Fatalf("refused token returned %+v", cred)
			}
			return
		}
		if len(token) > bearerCharsMax {
			t.Fatalf("accepted a %d-character token", len(token))
		}
		if cred.Hash != sha256.Sum256([]byte(token)) || cred.Now != 7 || cred.AccountID == "" {
			t.Fatalf("credential %+v does not match token %q", cred, token)
		}
		parts := strings.Split(token, ".")
		var want []string
		switch cred.Kind {
		case actors.CredentialAPIKey:
			want = []string{prefixAPIKey, cred.AccountID, cred.ID}
		case actors.CredentialOwnerSecret:
			want = []string{prefixOwnerSecret, cred.AccountID}
			if cred.ID != "" {
				t.Fatalf("owner secret with an id: %+v", cred)
			}
		case actors.CredentialSession:
			want = []string{prefixSession, cred.AccountID, cred.ID}
		default:
			t.Fatalf("accepted %q as kind %d", token, cred.Kind)
		}
		if len(parts) != len(want)+1 || strings.Join(parts[:len(want)], ".") != strings.Join(want, ".") || parts[len(want)] == "" {
			t.Fatalf("token %q parsed as %+v", token, cred)
		}
	})
}

func TestStatusOfEveryCode(t *testing.T) {
	t.Parallel()
	want := map[actors.Code]int{
		actors.CodeUnauthorized:        401,
		actors.CodeForbidden:           403,
		actors.CodeNotFound:            404,
		actors.CodeValidation:          422,
		actors.CodeStaleVersion:        409,
		actors.CodeConflict:            409,
		actors.CodeDuplicateAddress:    409,
		actors.CodeOverviewFull:        409,
		actors.CodeSpaceFull:           409,
		actors.CodeBookmarkFull:        409,
		actors.CodeCrossTypeMove:       409,
		actors.CodeIdempotencyConflict: 409,
		actors.CodeRateLimited:         429,
		actors.CodeHTTPError:           503,
		codeBadRequest:                 400,
		codeMethodNotAllowed:           405,
		codeURITooLong:                 414,
		codeHeadersTooLarge:            431,
		codeVersionNotSupported:        505,
		actors.CodeInternal:            500,
	}
	for code, status := range want {
		if got := StatusOf(code); got != status {
			t.Errorf("StatusOf(%s) = %d, want %d", code, got, status)
		}
	}
	// The table holds exactly the codes of actors/errors.go.
	if len(statusOf) != len(want) {
		t.Errorf("statusOf has %d codes, the spec %d", len(statusOf), len(want))
	}
	for code := range statusOf {
		if _, known := want[code]; !known {
			t.Errorf("statusOf maps %s, which this test does not know", code)
		}
	}
	for _, code := range []actors.Code{"", "TEAPOT", "validation"} {
		if got := StatusOf(code); got != 500 {
			t.Errorf("StatusOf(%q) = %d, want 500", code, got)
		}
	}
}

func TestWriteErrorShape(t *testing.T) {
	t.Parallel()
	ctx := requestWith("", nil)
	writeError(ctx, actors.Errorf(actors.CodeStaleVersion, "the resource changed"))
	if ctx.Response.StatusCode() != 409 || string(ctx.Response.Header.ContentType()) != "application/json" {
		t.Fatalf("status %d, content type %q", ctx.Response.StatusCode(), ctx.Response.Header.ContentType())
	}
	var body map[string]string
	if err := json.Unmarshal(ctx.Response.Body(), &body); err != nil {
		t.Fatal(err)
	}
	if len(body) != 2 || body["code"] != "STALE_VERSION" || body["error"] != "the resource changed" {
		t.Fatalf("body %s", ctx.Response.Body())
	}
}

func TestStoreError(t *testing.T) {
	t.Parallel()
	rule := actors.Errorf(actors.CodeNotFound, "card not found")
	cases := []struct {
		err  error
		code actors.Code
	}{
		{clustererr.ErrNotLeader, actors.CodeHTTPError},
		{fmt.Errorf("forward: %w", clustererr.ErrNotLeader), actors.CodeHTTPError},
		{clustererr.ErrOutcomeUnknown, actors.CodeHTTPError},
		{rule, actors.CodeNotFound},
		{fmt.Errorf("wrapped: %w", rule), actors.CodeNotFound},
		{errors.New("dial tcp 10.0.0.7:7000: connection refused"), actors.CodeHTTPError},
	}
	for _, tc := range cases {
		got := specError(tc.err)
		if got.Code != tc.code {
			t.Errorf("specError(%v) = %v, want code %s", tc.err, got, tc.code)
		}
		if tc.code == actors.CodeHTTPError && strings.Contains(got.Message, "10.0.0.7") {
			t.Errorf("storeError leaks an internal address: %q", got.Message)
		}
	}
	if specError(clustererr.ErrNotLeader).Message == specError(clustererr.ErrOutcomeUnknown).Message {
		t.Error("a safe-to-retry failure and an unknown outcome read the same")
	}
}

func BenchmarkDecodeBodyCardCreate(b *testing.B) {
	body := []byte(`{"address":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4","name":"Cold storage","note":"bought 2019","color_key":"teal"}`)
	ctx := requestWith("application/json", body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var dst cardCreateRequest
		if err := decodeBody(ctx, &dst, cardBodyBytesMax); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalBodyHash(b *testing.B) {
	body := []byte(`{"note":"bought 2019","address":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4","name":"Cold storage","color_key":"teal"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		canonicalBodyHash(body)
	}
}

func ptr[T any](v T) *T { return &v }

// TestClusterConditionsAreToldOnce: every condition of the cluster the
// node returns becomes its spec error in the edge's one table, with the
// status and Retry-After a client acts on, wrapped or not; a node address
// in a condition's chain never reaches the client.
func TestClusterConditionsAreToldOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err        error
		code       actors.Code
		retryAfter int
		message    string // "" = any
	}{
		{clustererr.ErrGroupMoved, actors.CodeHTTPError, 1, "this account's raft group is now led elsewhere, or the account has just moved to another group; retry in a second"},
		{fmt.Errorf("group 2: %w", clustererr.ErrSlotAway), actors.CodeHTTPError, 1, "this account is moving between the cluster's raft groups; retry in a second"},
		{fmt.Errorf("10.0.0.7:7000: %w", clustererr.ErrNotLeader), actors.CodeHTTPError, 0, msgNoLeader},
		{clustererr.ErrNoDirectory, actors.CodeHTTPError, 0, msgNoLeader},
		{context.DeadlineExceeded, actors.CodeHTTPError, 0, msgOutcomeUnknown},
		{&clustererr.VersionError{Want: 3, Behind: []string{"node-2 (version 2)"}}, actors.CodeHTTPError, 0,
			"the cluster is being upgraded: this change needs feature version 3, which node-2 (version 2) do not support yet; retry once every node runs the new release"},
		{&clustererr.VersionError{Want: 9}, actors.CodeHTTPError, 0,
			"this node's release does not support this change yet (feature version 9); retry once every node runs the new release"},
		{fmt.Errorf("%w: no server %q in the cluster", clustererr.ErrUnknownServer, "n9"), actors.CodeNotFound, 0, `cluster: unknown server: no server "n9" in the cluster`},
		{&clustererr.NoAccountError{Account: "acct-x"}, actors.CodeNotFound, 0, `no account "acct-x" in this cluster`},
		{fmt.Errorf("%w: id", clustererr.ErrInvalidMember), actors.CodeValidation, 0, ""},
		{&clustererr.GroupRangeError{Group: 7, Count: 3}, actors.CodeValidation, 0, "there is no group 7: groups are numbered from 0 to 2"},
		{&clustererr.SlotRangeError{Slot: -1, Count: 4096}, actors.CodeValidation, 0, "slot must be from 0 to 4095"},
		{clustererr.ErrGroupNotNamed, actors.CodeValidation, 0, `a sharded cluster (--groups) hands over one group's leadership at a time: send {"group": N}`},
		{clustererr.ErrMemberConflict, actors.CodeConflict, 0, ""},
		{clustererr.ErrNoQuorum, actors.CodeConflict, 0, ""},
		{fmt.Errorf("%w: a backup waits until no slot is moving", clustererr.ErrSlotMoving), actors.CodeConflict, 0, "cluster: the slot is already moving: a backup waits until no slot is moving"},
		{clustererr.ErrSlotAtTarget, actors.CodeConflict, 0, ""},
		{fmt.Errorf("%w (leadership transfer timeout)", clustererr.ErrTransferIncomplete), actors.CodeHTTPError, 2,
			"the leadership transfer did not complete in time (the target may still be catching up on the log); ask again in a few seconds"},
	}
	for _, tc := range cases {
		got := specError(tc.err)
		if got.Code != tc.code || got.RetryAfter != tc.retryAfter || tc.message != "" && got.Message != tc.message {
			t.Errorf("%v: told %+v, want %s, retry after %d, %q", tc.err, got, tc.code, tc.retryAfter, tc.message)
		}
		if strings.Contains(got.Message, "10.0.0.7") {
			t.Errorf("%v: the client is told a node's address: %q", tc.err, got.Message)
		}
	}
}

// TestBodyOfAnotherTypeIsAnInternalError: a result whose body is not the
// type asked for is an internal error, never a panic.
func TestBodyOfAnotherTypeIsAnInternalError(t *testing.T) {
	t.Parallel()
	if _, err := bodyOf[actors.KeyView](actors.Result{Status: 200, Body: actors.MeView{}}); actors.ErrorCode(err) != actors.CodeInternal {
		t.Fatalf("a MeView read as a KeyView: %v", err)
	}
	if v, err := bodyOf[actors.KeyView](actors.Result{Status: 201, Body: actors.KeyView{KeyID: "k"}}); err != nil || v.KeyID != "k" {
		t.Fatalf("a KeyView: %+v, %v", v, err)
	}
}

// The edge's per-key bucket is named by the key's account and id, read
// from the token's shape alone (bearerShape: no hash), and anything else
// by the token itself.
func TestBearerKeyIDNamesTheKeyItsTokenShows(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]string{
		"Bearer awk.acct1.key1.secret": "acct1.key1",
		"bearer awt.acct1.sess1.s":     "acct1.sess1",
		"Bearer aws.acct1.secret":      "acct1.",
		"Bearer nonsense":              "invalid:nonsense",
		"Basic dXNlcjpwdw==":           "malformed",
	} {
		if got := bearerKeyID([]byte(header)); got != want {
			t.Errorf("bearerKeyID(%q) = %q, want %q", header, got, want)
		}
	}
	if cred, ok := bearerShape("awk.acct1.key1.secret"); !ok || cred.Hash != (actors.Hash{}) {
		t.Errorf("bearerShape hashed the token or refused it: %+v, %v", cred, ok)
	}
}

// An error specError cannot name is a 503 that tells the client only to
// retry; its cause goes to the operator's log, once, and a named one
// (the client was told what happened) logs nothing. Not parallel: it
// swaps the package's log.
func TestAnUnnamedFailureIsLoggedForTheOperator(t *testing.T) {
	var logged strings.Builder
	before := unnamedFailureLog.Load()
	unnamedFailureLog.Store(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { unnamedFailureLog.Store(before) })

	if got := specError(clustererr.ErrNotLeader); got.Code != actors.CodeHTTPError || logged.Len() != 0 {
		t.Fatalf("a named failure: %v; logged %q", got, logged.String())
	}
	got := specError(fmt.Errorf("store: %w", errors.New("something the table does not know")))
	if got.Code != actors.CodeHTTPError || got.Message != "the request could not be completed; retry shortly" {
		t.Fatalf("an unnamed failure answered %v", got)
	}
	if line := logged.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, "something the table does not know") || !strings.Contains(line, "level=WARN") {
		t.Fatalf("the operator's log: %q", line)
	}
}
