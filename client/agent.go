package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
)

// Agent is the Agent API for one key: the generated operations (API) and
// the spec's procedures.
type Agent struct {
	// API is every operation of /v1, typed; its HTTP client retries as
	// RetryTransport says and sends the key.
	API *ClientWithResponses

	root string // the API's base URL, with /v1
	http *http.Client
}

// New returns an Agent for the server at root (for example
// http://127.0.0.1:8080, without /v1) with the API key key. A nil
// httpClient uses one whose transport is a RetryTransport over
// http.DefaultTransport; a given one should send the key itself.
func New(root, key string, httpClient *http.Client) (*Agent, error) {
	if httpClient == nil {
		httpClient = &http.Client{Transport: &RetryTransport{Key: key}}
	}
	base := strings.TrimRight(root, "/") + "/v1"
	api, err := NewClientWithResponses(base, WithHTTPClient(httpClient))
	if err != nil {
		return nil, err
	}
	return &Agent{API: api, root: base, http: httpClient}, nil
}

// Do sends one request to path under /v1 ("/portfolio/cards", its
// parameters already escaped) through the Agent's HTTP client, so with
// the key and the retries, and returns the answer whole. It is for a
// caller that handles operations generically (the MCP bridge); a
// program calling a known operation uses API and its types. A non-empty
// idempotencyKey is sent as the Idempotency-Key header; a non-nil body
// as JSON.
func (a *Agent) Do(ctx context.Context, method, path string, query url.Values, idempotencyKey string, body []byte) (*http.Response, []byte, error) {
	u := a.root + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return resp, answer, nil
}

// APIError is an error answer of the API: its HTTP status, and the spec's
// code and message (automation uses Code).
type APIError struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"error"`
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Check returns nil for a 2xx answer and the answer's *APIError otherwise;
// resp is what the generated client returned (its HTTPResponse and Body).
func Check(httpResp *http.Response, body []byte) error {
	if httpResp.StatusCode >= 200 && httpResp.StatusCode < 300 {
		return nil
	}
	e := &APIError{Status: httpResp.StatusCode}
	if json.Unmarshal(body, e) != nil || e.Code == "" {
		e.Code, e.Message = "HTTP_ERROR", strings.TrimSpace(string(body))
	}
	return e
}

// IsCode reports whether err is an *APIError with the spec code code.
func IsCode(err error, code string) bool {
	e, ok := err.(*APIError)
	return ok && e.Code == code
}

// NewIdempotencyKey returns a fresh token for one intended operation
// (Idempotency rule 1): pass it in the operation's params, and the
// operation's retries (RetryTransport) reuse it.
func NewIdempotencyKey() IdempotencyKey {
	var b [20]byte
	rand.Read(b[:])
	return "aw-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// Me reads /v1/me.
func (a *Agent) Me(ctx context.Context) (*Me, error) {
	r, err := a.API.GetMeWithResponse(ctx)
	if err != nil {
		return nil, err
	}
	if err := Check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}

// CreatePortfolioCard adds an Account card, with a fresh idempotency key
// for this one intended creation.
func (a *Agent) CreatePortfolioCard(ctx context.Context, card CardCreateRequest) (*Card, error) {
	key := NewIdempotencyKey()
	r, err := a.API.CreatePortfolioCardWithResponse(ctx, &CreatePortfolioCardParams{IdempotencyKey: &key}, card)
	if err != nil {
		return nil, err
	}
	if err := Check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return &r.JSON201.Card, nil
}

// UpdatePortfolioCard writes change onto the card as of version (the one
// the caller read). On 409 STALE_VERSION it follows the spec's rule:
// re-read the card, and if it is still there and change still applies
// (apply returns true for the card as it is now), write once more with the
// new version; a second conflict is returned, not retried
// (retryOnceIfStale).
func (a *Agent) UpdatePortfolioCard(ctx context.Context, cardID, version string, change CardPatchRequest, apply func(now Card) bool) (*Card, error) {
	write := func(version string) (*Card, error) {
		body := change
		body.ExpectedVersion = version
		r, err := a.API.UpdatePortfolioCardWithResponse(ctx, cardID, body)
		if err != nil {
			return nil, err
		}
		if err := Check(r.HTTPResponse, r.Body); err != nil {
			return nil, err
		}
		return &r.JSON200.Card, nil
	}
	reread := func() (Card, string, error) {
		r, err := a.API.GetPortfolioCardWithResponse(ctx, cardID)
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return Card{}, "", err // gone, or no longer readable: the target is not there to retry
		}
		return r.JSON200.Card, r.JSON200.Card.Version, nil
	}
	return retryOnceIfStale(version, write, reread, sameCard(cardID, apply))
}

// Transactions walks a card's History page by page, following
// next_offset until has_more is false. A page that says it is degraded
// ends the walk with an error naming it, never with a short History.
func (a *Agent) Transactions(ctx context.Context, cardID string, pageSize int) iter.Seq2[Transaction, error] {
	return func(yield func(Transaction, error) bool) {
		offset := 0
		for {
			r, err := a.API.ListCardTransactionsWithResponse(ctx, cardID, &ListCardTransactionsParams{Offset: &offset, Limit: &pageSize})
			if err == nil {
				err = Check(r.HTTPResponse, r.Body)
			}
			if err == nil && r.JSON200.HistoryDegraded {
				err = &APIError{Status: http.StatusOK, Code: "HISTORY_DEGRADED", Message: "the block explorer did not answer in full; try again later"}
			}
			if err != nil {
				yield(Transaction{}, err)
				return
			}
			for _, tx := range r.JSON200.Transactions {
				if !yield(tx, nil) {
					return
				}
			}
			if !r.JSON200.HasMore || r.JSON200.NextOffset == nil {
				return
			}
			offset = *r.JSON200.NextOffset
		}
	}
}
