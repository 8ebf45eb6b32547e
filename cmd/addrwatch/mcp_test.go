package main

import (
	"net/http"
	"net/http/httptest"
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
