package chain

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// simBaseURL is the base URL of an in-process upstream. The host is never
// resolved: handlerTransport answers every request itself.
const simBaseURL = "http://upstream.invalid"

// NewHandlerClient returns a Client whose requests are answered in process
// by h, without a socket: the way the server talks to the simulated chain.
// Everything else (concurrency bound, timeouts, retries, status handling,
// size cap, decoding) is the ordinary Client. opts.HTTPClient is ignored.
// h must return when the request's context is done.
func NewHandlerClient(h http.Handler, opts ClientOptions) *Client {
	opts.HTTPClient = &http.Client{Transport: handlerTransport{h}}
	return newClient(simBaseURL, opts)
}

// handlerTransport is an http.RoundTripper that calls a handler directly.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	defer func() {
		// A panicking handler must not take the server down with it; the
		// client sees a transport error, as with a crashed upstream.
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("in-process upstream panicked: %v", p)
		}
	}()
	if req.Body != nil {
		_ = req.Body.Close() // GETs only; nothing to send
	}
	w := &bufferedResponse{header: make(http.Header)}
	t.h.ServeHTTP(w, req)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header,
		Body:          io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()),
		Request:       req,
	}, nil
}

// bufferedResponse collects a handler's answer. It keeps at most one byte
// more than the client accepts, so an oversized answer still fails the
// client's size check without filling memory.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferedResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if room := responseBytesMax + 1 - w.body.Len(); room > 0 {
		w.body.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
