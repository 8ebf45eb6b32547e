package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	agentapi "github.com/addrwatch/addrwatch/client"
)

// Setup and teardown reach the Agent API (/v1) through package client, the
// typed client the project publishes: bench then uses it as any Go agent
// would, and an API change it does not follow fails bench's build rather
// than a hand-built URL at run time. The measured load stays on fasthttp
// (client.go): net/http allocates several times more per request, and the
// harness must not become the bottleneck it measures. Setup runs once and
// untimed, so that cost does not matter there.

// setupCallTimeoutMin is the least time one setup call to the Agent API
// may take, retries included. Setup is not measured, so a tight --timeout
// chosen for the load should not fail it; a server that hangs still ends
// the run.
const setupCallTimeoutMin = 30 * time.Second

// newSetupTransport is the one connection pool of every setup agent, so
// that agents of different keys share connections to a node. It keeps
// idle as many connections per node as setup has calls in flight at most:
// setupParallelism account set-ups, or one Sheet reset per worker. Like
// the fasthttp client it ignores HTTP_PROXY, so setup and load take the
// same route to the nodes.
func newSetupTransport(connections int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0, // no total bound: the per-node one is the limit that matters
		MaxIdleConnsPerHost: connections + setupParallelism,
		IdleConnTimeout:     time.Minute,
	}
}

// agent returns the Agent API client of key through target, for setup and
// teardown only (see the top of this file). Its RetryTransport sends the
// key and retries a 429, or a 503 that cannot apply a write twice, as the
// spec asks an agent to.
func (c *client) agent(target, key string) (*agentapi.Agent, error) {
	hc := &http.Client{
		Timeout:   c.setupTimeout,
		Transport: &agentapi.RetryTransport{Key: key, Base: c.setupTransport},
	}
	return agentapi.New(target, key, hc)
}

// checkAnswer holds a typed call's answer to call's rule: any status other
// than want is an error that names the request and says what came back
// (the status, the spec's code and message, or an unexpected success's
// body). A transport failure needs no such help: net/http's error already
// names the request.
func checkAnswer(resp *http.Response, body []byte, want int) error {
	if resp.StatusCode == want {
		return nil
	}
	err := agentapi.Check(resp, body)
	if err == nil {
		err = fmt.Errorf("status %d, want %d: %s", resp.StatusCode, want, strings.TrimSpace(string(body)))
	}
	return fmt.Errorf("%s %s: %w", resp.Request.Method, resp.Request.URL, err)
}
