package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

const (
	// requestTimeout bounds a whole request, body included, so a hung server
	// or a black-holed address cannot hang a script.
	requestTimeout = 10 * time.Second

	// transferTimeout bounds a backup download or a restore upload, whose
	// body is the whole state and may take minutes on a slow link.
	transferTimeout = 10 * time.Minute

	// responseBytesMax bounds what the CLI reads from a response. Every
	// answer of the admin and owner APIs is far smaller; a larger one means
	// the URL points at something else.
	responseBytesMax = 4 << 20

	userAgent = "addrwatch-cli"
)

// client sends JSON requests to one API with one bearer credential.
type client struct {
	http  *http.Client
	base  string // scheme://host[:port][/prefix], without a trailing slash
	token string
}

// do sends a request with in (if not nil) as its JSON body and returns the
// body of a 2xx response. Any other status becomes an *apiError.
func (c *client) do(ctx context.Context, method, path string, in any) ([]byte, error) {
	var body io.Reader
	contentType := ""
	if in != nil {
		encoded, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(encoded)
		contentType = "application/json"
	}
	resp, err := c.send(ctx, method, path, contentType, body, -1, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, responseBytesMax+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	if len(data) > responseBytesMax {
		return nil, fmt.Errorf("%s %s: response larger than %d bytes", method, path, responseBytesMax)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newAPIError(resp.StatusCode, data)
	}
	return data, nil
}

// send sends one request with the credential and returns the response with
// its body unread, whatever its status; the caller closes the body. body may
// be nil; size is its length, or -1 when unknown (then the length comes from
// body itself where net/http can tell it).
func (c *client) send(ctx context.Context, method, path, contentType string, body io.Reader, size int64, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	if size >= 0 {
		req.ContentLength = size
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", userAgent)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	// Errors from Do name the method and URL, never the headers, so the
	// credential cannot leak into the message.
	return c.http.Do(req)
}

// errorFrom turns a non-2xx response into an *apiError, reading at most
// responseBytesMax of its body; it returns nil for a 2xx response.
func errorFrom(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return nil
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, responseBytesMax))
	return newAPIError(resp.StatusCode, data)
}

// apiError is a non-2xx answer. The server's body is
// {"code": "...", "error": "..."} on every error path.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s: %s (HTTP %d)", e.code, e.message, e.status)
}

// newAPIError reads the server's error body. When the body is not the
// server's shape (a proxy's error page, a wrong URL) only the status is
// reported: echoing an unknown body could print anything.
func newAPIError(status int, body []byte) *apiError {
	var shape struct {
		Code  string `json:"code"`
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &shape) == nil && shape.Code != "" {
		return &apiError{status: status, code: shape.Code, message: shape.Error}
	}
	return &apiError{status: status, code: fmt.Sprintf("HTTP_%d", status), message: http.StatusText(status)}
}
