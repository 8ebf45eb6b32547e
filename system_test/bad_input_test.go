package system_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// apBadRoute is one card write route with a builder for a body that would
// be accepted, so that each bad case changes one thing about it.
type apBadRoute struct {
	name   string
	method string
	path   string
	// valid is an acceptable body as a JSON object text (without the
	// closing brace when open is true).
	valid string
}

// TestBadInputOnCardRoutes sends malformed requests to every Account card
// write route (create, validate, patch, delete). Each must answer
// 422 VALIDATION with the {"code","error"} body (never a 5xx) and leave
// the account exactly as it was.
func TestBadInputOnCardRoutes(t *testing.T) {
	t.Parallel()
	s := apStartServer(t)

	// routes returns the four write routes for an account whose card is c.
	routes := func(c map[string]any) []apBadRoute {
		v := c["version"].(string)
		return []apBadRoute{
			{"validate", "POST", "/v1/portfolio/cards/validate", `{"address":"` + apAddress("bad-new") + `","name":"n"`},
			{"create", "POST", "/v1/portfolio/cards", `{"address":"` + apAddress("bad-new") + `","name":"n"`},
			{"patch", "PATCH", "/v1/portfolio/cards/" + apID(c), `{"expected_version":"` + v + `","name":"n"`},
			{"delete", "DELETE", "/v1/portfolio/cards/" + apID(c), `{"expected_version":"` + v + `"`},
		}
	}

	type badCase struct {
		name        string
		body        func(rt apBadRoute) string // "" with nilBody sends no body
		contentType string                     // "" means none at all
		only        []string                   // route names; empty means all
		nilBody     bool
		// oversize sends only the headers, declaring the body's length: the
		// server refuses on the declared length before reading any of it,
		// and a client that pushes the whole body races the server's close
		// (broken pipe) instead of reading the answer.
		oversize bool
	}
	const ct = "application/json"
	bigNote := func(n int) func(apBadRoute) string {
		return func(rt apBadRoute) string {
			return rt.valid + `,"note":"` + strings.Repeat("a", n) + `"}`
		}
	}
	cases := []badCase{
		{name: "invalid JSON: cut short", body: func(rt apBadRoute) string { return rt.valid }, contentType: ct},
		{name: "invalid JSON: unquoted key", body: func(rt apBadRoute) string { return `{address: "x"}` }, contentType: ct},
		{name: "invalid JSON: single quotes", body: func(rt apBadRoute) string { return `{'expected_version':'v1'}` }, contentType: ct},
		{name: "invalid JSON: trailing comma", body: func(rt apBadRoute) string { return rt.valid + `,}` }, contentType: ct},
		{name: "array instead of object", body: func(rt apBadRoute) string { return `[` + rt.valid + `}]` }, contentType: ct},
		{name: "string instead of object", body: func(rt apBadRoute) string { return `"` + apAddress("bad-new") + `"` }, contentType: ct},
		{name: "number instead of object", body: func(rt apBadRoute) string { return `42` }, contentType: ct},
		{name: "boolean instead of object", body: func(rt apBadRoute) string { return `true` }, contentType: ct},
		{name: "null instead of object", body: func(rt apBadRoute) string { return `null` }, contentType: ct},
		{name: "address as number", body: func(rt apBadRoute) string { return `{"address":12345}` }, contentType: ct, only: []string{"create", "validate"}},
		{name: "name as bool", body: func(rt apBadRoute) string { return rt.valid + `,"name":true}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "note as object", body: func(rt apBadRoute) string { return rt.valid + `,"note":{"a":1}}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "color_key as array", body: func(rt apBadRoute) string { return rt.valid + `,"color_key":["teal"]}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "expected_version as number", body: func(rt apBadRoute) string { return `{"expected_version":1,"name":"n"}` }, contentType: ct, only: []string{"patch", "delete"}},
		{name: "missing address", body: func(rt apBadRoute) string { return `{"name":"n","note":"o"}` }, contentType: ct, only: []string{"create", "validate"}},
		{name: "address null", body: func(rt apBadRoute) string { return `{"address":null,"name":"n"}` }, contentType: ct, only: []string{"create", "validate"}},
		{name: "missing expected_version", body: func(rt apBadRoute) string { return `{"name":"n"}` }, contentType: ct, only: []string{"patch"}},
		{name: "missing expected_version (delete)", body: func(rt apBadRoute) string { return `{}` }, contentType: ct, only: []string{"delete"}},
		{name: "unknown field", body: func(rt apBadRoute) string { return rt.valid + `,"nickname":"x"}` }, contentType: ct},
		{name: "unknown field id", body: func(rt apBadRoute) string { return rt.valid + `,"id":"forced-id"}` }, contentType: ct},
		{name: "grant field", body: func(rt apBadRoute) string { return rt.valid + `,"grant":"write"}` }, contentType: ct},
		{name: "effective_access field", body: func(rt apBadRoute) string { return rt.valid + `,"effective_access":"write"}` }, contentType: ct},
		{name: "field name in other case", body: func(rt apBadRoute) string { return rt.valid + `,"Color_Key":"teal"}` }, contentType: ct},
		{name: "trailing garbage", body: func(rt apBadRoute) string { return rt.valid + `} garbage` }, contentType: ct},
		{name: "second object", body: func(rt apBadRoute) string { return rt.valid + `}{}` }, contentType: ct},
		{name: "trailing bracket", body: func(rt apBadRoute) string { return rt.valid + `}]` }, contentType: ct},
		{name: "empty body", body: func(rt apBadRoute) string { return `` }, contentType: ct},
		{name: "no body", contentType: ct, nilBody: true},
		{name: "whitespace body", body: func(rt apBadRoute) string { return " \n\t " }, contentType: ct},
		{name: "text/plain", body: func(rt apBadRoute) string { return rt.valid + `}` }, contentType: "text/plain"},
		{name: "form encoded", body: func(rt apBadRoute) string { return rt.valid + `}` }, contentType: "application/x-www-form-urlencoded"},
		{name: "json-like content type", body: func(rt apBadRoute) string { return rt.valid + `}` }, contentType: "application/jsonx"},
		{name: "no Content-Type", body: func(rt apBadRoute) string { return rt.valid + `}` }, contentType: ""},
		{name: "body over 64 KiB", body: bigNote(65 << 10), contentType: ct},
		{name: "body over 2 MiB", body: bigNote(2<<20 + 1024), contentType: ct, oversize: true},
		{name: "name over the limit", body: func(rt apBadRoute) string { return rt.valid + `,"name":"` + strings.Repeat("n", 101) + `"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "multibyte name over the limit", body: func(rt apBadRoute) string { return rt.valid + `,"name":"` + strings.Repeat("é", 101) + `"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "note over the limit", body: func(rt apBadRoute) string { return rt.valid + `,"note":"` + strings.Repeat("o", 1001) + `"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "name with NUL", body: func(rt apBadRoute) string { return rt.valid + `,"name":"a\u0000b"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "name with newline", body: func(rt apBadRoute) string { return rt.valid + `,"name":"a\nb"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "name with tab", body: func(rt apBadRoute) string { return rt.valid + `,"name":"a\tb"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "name with escape sequence", body: func(rt apBadRoute) string { return rt.valid + `,"name":"\u001b[31mred"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "name with DEL", body: func(rt apBadRoute) string { return rt.valid + `,"name":"a\u007fb"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "name with C1 control", body: func(rt apBadRoute) string { return rt.valid + `,"name":"a\u0085b"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "name with zero-width space", body: func(rt apBadRoute) string { return rt.valid + `,"name":"a\u200bb"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "name with bidi override", body: func(rt apBadRoute) string { return rt.valid + `,"name":"a\u202eb"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "note with bell", body: func(rt apBadRoute) string { return rt.valid + `,"note":"a\u0007b"}` }, contentType: ct, only: []string{"create", "validate", "patch"}},
		{name: "deeply nested value", body: func(rt apBadRoute) string {
			return rt.valid + `,"name":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
		}, contentType: ct},
	}

	for _, bc := range cases {
		t.Run(strings.ReplaceAll(bc.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			e := apSetup(t, s, "base")
			card := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("bad-card"), "name": "keep", "note": "keep note", "color_key": "slate"})
			apOwnerCreateCard(t, s, e.acct, apAddress("bad-hidden"), "hidden")
			before := apOwnerList(t, s, e.acct)
			beforeAgent := apList(t, s, e.write)
			for _, rt := range routes(card) {
				if len(bc.only) > 0 && !slices.Contains(bc.only, rt.name) {
					continue
				}
				var body []byte
				if !bc.nilBody {
					body = []byte(bc.body(rt))
				}
				var r response
				var err error
				if bc.oversize {
					r, err = apDeclaredBody(s, rt.method, rt.path, e.write, bc.contentType, body)
				} else {
					r, err = apRaw(rt.method, s.URL+rt.path, e.write, body, bc.contentType)
				}
				if err != nil {
					t.Errorf("%s %s: %v", rt.method, rt.path, err)
					continue
				}
				what := fmt.Sprintf("%s (%s %s)", bc.name, rt.method, rt.name)
				apExpect(t, what, r, http.StatusUnprocessableEntity, "VALIDATION")
				var m map[string]any
				if r.Status == http.StatusUnprocessableEntity && json.Unmarshal(r.Body, &m) == nil && len(m) != 2 {
					t.Errorf("%s: error body has fields beyond code and error: %s", what, r.Body)
				}
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("%s: Content-Type %q", what, ct)
				}
			}
			if after := apOwnerList(t, s, e.acct); !bytes.Equal(before, after) {
				t.Fatalf("%s changed the account:\nbefore %s\nafter  %s", bc.name, before, after)
			}
			if after := apList(t, s, e.write); !bytes.Equal(beforeAgent.raw, after.raw) {
				t.Fatalf("%s changed the agent's list:\nbefore %s\nafter  %s", bc.name, beforeAgent.raw, after.raw)
			}
		})
	}

	// The limits are not stricter than they should be.
	t.Run("accepted_edges", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		// JSON with a charset parameter.
		r, err := apRaw("POST", s.URL+"/v1/portfolio/cards", e.write, []byte(`{"address":"`+apAddress("edge-1")+`"}`), "application/json; charset=utf-8")
		if err != nil {
			t.Fatal(err)
		}
		expect(t, r, http.StatusCreated, "")
		// A body just under 64 KiB (whitespace padding) is read.
		padded := `{"address":"` + apAddress("edge-2") + `"` + strings.Repeat(" ", 60<<10) + `}`
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, padded), http.StatusCreated, "")
		// Names and notes at their limits, in code points; notes may hold newlines and tabs.
		c := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("edge-3"), "name": strings.Repeat("é", 100), "note": strings.Repeat("ü", 998) + "\n\t"})
		apFields(t, c, map[string]any{"name": strings.Repeat("é", 100), "note": strings.Repeat("ü", 998) + "\n\t"})
		r = do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+apID(c), e.write, map[string]any{"expected_version": c["version"], "name": strings.Repeat("n", 100), "note": strings.Repeat("o", 1000)})
		expect(t, r, http.StatusOK, "")
		// Unicode escapes decode to the same text.
		r = do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, `{"address":"`+apAddress("edge-4")+`","name":"caf\u00e9"}`)
		expect(t, r, http.StatusCreated, "")
		apFields(t, apCardOf(t, r), map[string]any{"name": "café"})
	})
}

// apDeclaredBody sends a request's headers with the Content-Length of body
// and then, only if the server has not answered within a moment, the body
// itself; it returns the server's answer.
func apDeclaredBody(s *server, method, path, bearer, contentType string, body []byte) (response, error) {
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.URL, "http://"), 5*time.Second)
	if err != nil {
		return response{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		method, path, strings.TrimPrefix(s.URL, "http://"), bearer, contentType, len(body))
	if _, err := conn.Write([]byte(head)); err != nil {
		return response{}, err
	}
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := br.Peek(1); err != nil {
		// No early answer: send the body and wait for the answer to it.
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := conn.Write(body); err != nil {
			return response{}, err
		}
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}
