package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// addrwatch mcp refuses, before any request, what would leak the key or
// cannot work: no environment, or plain http to another machine.
func TestMCPRefusesToSendTheKeyInClearText(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{}, nil, "set ADDRWATCH_URL (the server's root URL) and ADDRWATCH_API_KEY"},
		{map[string]string{"ADDRWATCH_URL": "http://127.0.0.1:1"}, nil, "set ADDRWATCH_URL"},
		{map[string]string{"ADDRWATCH_URL": "http://addrwatch.example", "ADDRWATCH_API_KEY": "awk.a.b.secretpart"}, nil, "plain http to another machine"},
		{map[string]string{"ADDRWATCH_URL": "10.0.0.5:8080", "ADDRWATCH_API_KEY": "awk.a.b.secretpart"}, nil, "pass --insecure-http to accept that"},
		{map[string]string{"ADDRWATCH_URL": "ftp://x", "ADDRWATCH_API_KEY": "awk.a.b.secretpart"}, nil, "must be an http or https base URL"},
	} {
		r := runCLI(t, c.env, append([]string{"mcp"}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "secretpart") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", c.env, r.code, r.stderr, c.want)
		}
	}
	for root, safe := range map[string]bool{
		"https://addrwatch.example": true, "http://127.0.0.1:8080": true, "http://localhost:8080": true, "http://[::1]:8080": true,
		"http://addrwatch.example": false, "http://10.0.0.5": false, "http://127.0.0.1.example": false,
	} {
		if keySafeAt(root) != safe {
			t.Errorf("keySafeAt(%s) = %v", root, !safe)
		}
	}
}

// --insecure-http is a flag of the command, and the command goes on to
// ask the server: the document, then /v1/me, which this fake refuses, so
// it stops at start saying so, without the key.
func TestMCPInsecureHTTPIsAnExplicitChoice(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path == "/v1/openapi.json" {
			w.Write([]byte(`{}`))
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"code":"UNAUTHORIZED","error":"missing or invalid credentials"}`))
	}))
	defer srv.Close()
	env := map[string]string{"ADDRWATCH_URL": srv.URL, "ADDRWATCH_API_KEY": "awk.a.b.secretpart"}
	r := runCLI(t, env, "mcp", "--insecure-http")
	if r.code != exitFailure || !strings.Contains(r.stderr, "the server refused ADDRWATCH_API_KEY") || strings.Contains(r.stderr, "secretpart") || asked.Load() != 2 {
		t.Fatalf("exit %d, %d requests, stderr %q", r.code, asked.Load(), r.stderr)
	}
}

// A password in ADDRWATCH_URL's user information (a proxy's, say) is
// never printed: not in the refusal of plain http, not in the line that
// says which server the command serves, not in an error reaching it.
func TestMCPRedactsTheURLPassword(t *testing.T) {
	r := runCLI(t, map[string]string{"ADDRWATCH_URL": "http://proxyuser:urlsecret@addrwatch.example", "ADDRWATCH_API_KEY": "awk.a.b.secretpart"}, "mcp")
	if r.code != exitUsage || !strings.Contains(r.stderr, "proxyuser:xxxxx@addrwatch.example") || strings.Contains(r.stderr, "urlsecret") {
		t.Errorf("the refusal of plain http: exit %d, stderr %q", r.code, r.stderr)
	}

	doc, err := os.ReadFile("../../httpd/openapi/agent.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/openapi.json" {
			w.Write(doc)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"account_id":"acc1","key_id":"k1","capability":"read","plan":"base"}`))
	}))
	defer srv.Close()
	withPassword := strings.Replace(srv.URL, "http://", "http://proxyuser:urlsecret@", 1)
	var stderr bytes.Buffer
	a := &app{getenv: func(k string) string {
		return map[string]string{"ADDRWATCH_URL": withPassword, "ADDRWATCH_API_KEY": "awk.a.b.secretpart"}[k]
	}, stderr: &stderr}
	if err := serveMCP(context.Background(), a, strings.NewReader(""), io.Discard, false); err != nil {
		t.Fatalf("serve: %v (stderr %q)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "serving account acc1") || !strings.Contains(stderr.String(), "proxyuser:xxxxx@127.0.0.1") || strings.Contains(stderr.String(), "urlsecret") {
		t.Errorf("the start line: %q", stderr.String())
	}

	// An error on the way names the URL without the password too.
	srv.Close()
	stderr.Reset()
	err = serveMCP(context.Background(), a, strings.NewReader(""), io.Discard, false)
	if err == nil || strings.Contains(err.Error(), "urlsecret") || strings.Contains(stderr.String(), "urlsecret") {
		t.Errorf("a server that is gone: %v (stderr %q)", err, stderr.String())
	}
}
