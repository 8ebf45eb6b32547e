package client

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryTransport sends each request with the agent's key (except a public
// document's: the spec says the key is never sent there) and retries what
// the spec says to retry: a 429 after its Retry-After, and a 503 (no
// leader yet, an outcome the server could not learn) when a retry cannot
// apply a change twice: a GET, or a write carrying an Idempotency-Key,
// which the server answers once. A retry waits the server's Retry-After,
// else a backoff doubling from Backoff, with jitter, and never past the
// request context's deadline; after MaxAttempts the last answer is
// returned as it came.
type RetryTransport struct {
	Key         string
	Base        http.RoundTripper // nil: http.DefaultTransport
	MaxAttempts int               // 0: 5
	Backoff     time.Duration     // 0: 200 ms
}

func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	attempts := t.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	backoff := t.Backoff
	if backoff <= 0 {
		backoff = 200 * time.Millisecond
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	for attempt := 1; ; attempt++ {
		r := req.Clone(req.Context())
		if !publicDocument(r.URL.Path) {
			r.Header.Set("Authorization", "Bearer "+t.Key)
		}
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		resp, err := base.RoundTrip(r)
		if err != nil || attempt == attempts || !retryable(req, resp) {
			return resp, err
		}
		wait := retryAfter(resp, backoff<<(attempt-1))
		if deadline, has := req.Context().Deadline(); has && time.Until(deadline) < wait {
			return resp, nil // the answer the caller can act on, not a timeout
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err := sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// publicDocument reports whether path is one of the API's public
// documents: /v1/docs, /v1/docs/sheets and /v1/openapi.json, under any
// root the server is mounted at.
func publicDocument(path string) bool {
	return strings.HasSuffix(path, "/v1/openapi.json") || strings.HasSuffix(path, "/v1/docs") || strings.Contains(path, "/v1/docs/")
}

func retryable(req *http.Request, resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true // refused before anything was done
	case http.StatusServiceUnavailable:
		return req.Method == http.MethodGet || req.Header.Get("Idempotency-Key") != ""
	}
	return false
}

// retryAfter is the server's Retry-After, else backoff, with jitter: up to
// a quarter more, so clients refused together do not return together.
func retryAfter(resp *http.Response, backoff time.Duration) time.Duration {
	wait := backoff
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		wait = time.Duration(s) * time.Second
	}
	return wait + time.Duration(rand.Int64N(int64(wait)/4+1))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
