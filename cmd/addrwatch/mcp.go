package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentclient "github.com/addrwatch/addrwatch/client"
	"github.com/addrwatch/addrwatch/mcpserver"
)

var mcpCommand = &command{
	words:   []string{"mcp"},
	summary: "serve the Agent API to an agent host over MCP on stdin and stdout",
	details: `Speak the Model Context Protocol on stdin and stdout, for an agent host that
starts MCP servers as programs. Each tool is an operation of the Agent API
(/v1), called over HTTP with the key in ADDRWATCH_API_KEY on the server at
ADDRWATCH_URL, the server's root URL (for example http://127.0.0.1:8080,
without /v1). The tools are made from the server's own /v1/openapi.json, so
they match the server's version. A read key is offered the read tools only.

Rate-limited calls (429) are retried after Retry-After; an answer the server
could not give (503) is retried when retrying cannot apply a change twice.
The key is never written to the output or the log, nor is a password in
ADDRWATCH_URL (user:password@host prints as user:xxxxx@host). Diagnostics
go to stderr.
ADDRWATCH_URL must be https, or http to this machine: plain http elsewhere
would show the key to the network, and needs --insecure-http.

A host's configuration, for example:

  {"mcpServers": {"addrwatch": {"command": "addrwatch", "args": ["mcp"],
    "env": {"ADDRWATCH_URL": "https://addrwatch.example",
            "ADDRWATCH_API_KEY": "awk...."}}}}`,
	synopsis: "[--insecure-http]",
	example:  "addrwatch mcp   # with ADDRWATCH_URL=http://127.0.0.1:8080 and ADDRWATCH_API_KEY=awk.... in the environment",
	api:      agentAPI,
	define: func(fs *flag.FlagSet) action {
		insecure := fs.Bool("insecure-http", false, "allow an http:// ADDRWATCH_URL on another machine: the API key then crosses the network in clear text (default: only https, or http to this machine)")
		return func(ctx context.Context, a *app, _ []string) error {
			return serveMCP(ctx, a, a.stdin, a.stdout, *insecure)
		}
	},
}

// mcpRequestTimeout bounds one tool call's API request, its retries
// included.
const mcpRequestTimeout = 60 * time.Second

// serveMCP serves MCP on in and out until the host closes in.
func serveMCP(ctx context.Context, a *app, in io.Reader, out io.Writer, insecureHTTP bool) error {
	root, key := a.getenv("ADDRWATCH_URL"), a.getenv("ADDRWATCH_API_KEY")
	if root == "" || key == "" {
		return &usageError{msg: "set ADDRWATCH_URL (the server's root URL) and ADDRWATCH_API_KEY (an API key) in the environment"}
	}
	root, err := baseURL("ADDRWATCH_URL", root)
	if err != nil {
		return err
	}
	if !insecureHTTP && !keySafeAt(root) {
		return usagef("ADDRWATCH_URL %s is plain http to another machine, which would send the API key in clear text: use https, or pass --insecure-http to accept that", redacted(root))
	}
	agent, err := agentclient.New(root, key, &http.Client{Transport: &agentclient.RetryTransport{Key: key, MaxAttempts: 4}})
	if err != nil {
		return err
	}
	doc, err := fetchOpenAPI(ctx, agent)
	if err != nil {
		return err
	}
	me, err := agent.Me(ctx)
	if err != nil {
		return fmt.Errorf("the server refused ADDRWATCH_API_KEY: %w", err)
	}
	readOnly := me.Capability != agentclient.MeCapabilityWrite
	server, err := mcpserver.New(mcpserver.Config{
		OpenAPI: doc,
		Call: func(ctx context.Context, _ *auth.TokenInfo, r mcpserver.Request) (mcpserver.Reply, error) {
			ctx, cancel := context.WithTimeout(ctx, mcpRequestTimeout)
			defer cancel()
			resp, body, err := agent.Do(ctx, r.Method, r.Path, r.Query, r.IdempotencyKey, r.Body)
			if err != nil {
				return mcpserver.Reply{}, err
			}
			return mcpserver.Reply{Status: resp.StatusCode, Body: body, RetryAfter: resp.Header.Get("Retry-After")}, nil
		},
		ReadOnly: func(context.Context, *auth.TokenInfo) bool { return readOnly },
		// A server of another version (a rolling upgrade) may have an
		// operation this build has no tool for, or lack one: serve the
		// rest, and say so.
		Mismatch: func(err error) { fmt.Fprintf(a.stderr, "addrwatch mcp: left out: %v\n", err) },
		Version:  "v1",
	})
	if err != nil {
		return fmt.Errorf("the server's /v1/openapi.json: %w", err)
	}
	fmt.Fprintf(a.stderr, "addrwatch mcp: serving account %s with a %s key from %s\n", me.AccountId, me.Capability, redacted(root))
	err = server.MCP.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// redacted is root as it may be printed: a password in its user
// information (a proxy's, say) is a secret like the key, and becomes
// "xxxxx". net/http leaves it out of its own errors already.
func redacted(root string) string {
	u, err := url.Parse(root)
	if err != nil {
		return "(an unreadable URL)"
	}
	return u.Redacted()
}

// keySafeAt reports whether a key sent to root stays private on the way:
// https, or http that never leaves this machine.
func keySafeAt(root string) bool {
	u, err := url.Parse(root)
	if err != nil {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// fetchOpenAPI reads the server's /v1/openapi.json (without the key).
func fetchOpenAPI(ctx context.Context, agent *agentclient.Agent) ([]byte, error) {
	resp, body, err := agent.Do(ctx, http.MethodGet, "/openapi.json", nil, "", nil)
	if err != nil {
		return nil, fmt.Errorf("reach the server at ADDRWATCH_URL: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read /v1/openapi.json: HTTP %d", resp.StatusCode)
	}
	return body, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
