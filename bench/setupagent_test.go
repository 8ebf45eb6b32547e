package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	agentapi "github.com/addrwatch/addrwatch/client"
)

// A setup error through the typed client must say what was asked and what
// came back, as the fasthttp path's statusError does, and keep the
// *client.APIError reachable for callers that act on the status.
func TestSetupAgentErrorsNameTheRequestAndTheAnswer(t *testing.T) {
	t.Parallel()
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "GET" {
			w.Write([]byte(`{"cards":[]}`)) // a 200 where the caller below wants a 201
			return
		}
		w.WriteHeader(409)
		w.Write([]byte(`{"code":"STALE_VERSION","error":"the card changed"}`))
	}))
	defer srv.Close()
	c := newClient(1, time.Second)
	writer, err := c.agent(srv.URL, "awk_test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	key := agentapi.NewIdempotencyKey()
	del, err := writer.API.DeletePortfolioCardWithResponse(ctx, "c1", &agentapi.DeletePortfolioCardParams{IdempotencyKey: &key}, agentapi.CardDeleteRequest{ExpectedVersion: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	err = checkAnswer(del.HTTPResponse, del.Body, 200)
	want := "DELETE " + srv.URL + "/v1/portfolio/cards/c1: 409 STALE_VERSION: the card changed"
	if err == nil || err.Error() != want {
		t.Errorf("a refused write: %v, want %q", err, want)
	}
	if refused := (*agentapi.APIError)(nil); !errors.As(err, &refused) || refused.Status != 409 {
		t.Errorf("the APIError is not reachable in %v", err)
	}
	if gotAuth != "Bearer awk_test" {
		t.Errorf("Authorization %q, want the agent's key", gotAuth)
	}

	list, err := writer.API.ListPortfolioCardsWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkAnswer(list.HTTPResponse, list.Body, 201); err == nil || !strings.Contains(err.Error(), `status 200, want 201: {"cards":[]}`) {
		t.Errorf("an unexpected success: %v", err)
	}
	if err := checkAnswer(list.HTTPResponse, list.Body, 200); err != nil {
		t.Errorf("the wanted status: %v", err)
	}
}
