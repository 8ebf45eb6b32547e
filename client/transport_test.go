package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestKeyIsNeverSentToThePublicDocuments is the regression test of
// Authentication rule 4: the transport added the key to every request,
// /v1/docs and /v1/openapi.json included.
func TestKeyIsNeverSentToThePublicDocuments(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	a, err := New(srv.URL+"/mounted", "awk.secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, path := range []string{"/docs", "/docs/sheets", "/openapi.json", "/me", "/portfolio/cards"} {
		if _, _, err := a.Do(ctx, "GET", path, nil, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.API.GetDocs(ctx); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/mounted/v1/docs": "", "/mounted/v1/docs/sheets": "", "/mounted/v1/openapi.json": "",
		"/mounted/v1/me": "Bearer awk.secret", "/mounted/v1/portfolio/cards": "Bearer awk.secret",
	} {
		if got, asked := seen[path]; !asked || got != want {
			t.Errorf("%s: Authorization %q (asked: %v), want %q", path, got, asked, want)
		}
	}
}

func TestDoSendsTheIdempotencyKeyAndBody(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body = make([]byte, r.ContentLength)
		r.Body.Read(body)
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"card":{}}`))
	}))
	defer srv.Close()
	a, _ := New(srv.URL, "awk.k", nil)
	resp, answer, err := a.Do(context.Background(), "POST", "/portfolio/cards", map[string][]string{"x": {"1 2"}}, "token-0123456789abcdef", []byte(`{"address":"a"}`))
	if err != nil || resp.StatusCode != 201 || string(answer) != `{"card":{}}` {
		t.Fatalf("%v %v %s", resp, err, answer)
	}
	if got.URL.RequestURI() != "/v1/portfolio/cards?x=1+2" || got.Header.Get("Idempotency-Key") != "token-0123456789abcdef" ||
		got.Header.Get("Content-Type") != "application/json" || string(body) != `{"address":"a"}` {
		t.Fatalf("request %s %v %s", got.URL, got.Header, body)
	}
}
