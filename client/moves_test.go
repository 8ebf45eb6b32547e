package client

import (
	"context"
	"net/http"
	"testing"
)

func TestMoveCardSendsAnIdempotencyKeyAndReturnsTheNewID(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"POST /v1/cards/move": func(r fakeRequest) (int, string) {
			if r.Body["expected_destination_version"] != "sv-1" {
				return fakeError(http.StatusConflict, "STALE_VERSION")
			}
			return http.StatusOK, `{"old_id":"pc1","new_id":"bc9","location":{"kind":"bookmark","space_id":"s1","space_version":"sv-2"}}`
		},
	})
	space, version := "s1", "sv-1"
	move := MoveRequest{SourceKind: "portfolio", SourceId: "pc1", ExpectedSourceVersion: "cv-1", DestinationKind: "bookmark", DestinationSpaceId: &space, ExpectedDestinationVersion: &version}
	got, err := a.MoveCard(context.Background(), move)
	if err != nil || got.NewId != "bc9" || got.OldId != "pc1" || got.Location.Kind != "bookmark" {
		t.Fatalf("%+v %v", got, err)
	}
	stale := "sv-0"
	move.ExpectedDestinationVersion = &stale
	if _, err := a.MoveCard(context.Background(), move); !IsCode(err, "STALE_VERSION") {
		t.Fatalf("error %v", err)
	}
	moves := f.sent("POST /v1/cards/move")
	if len(moves) != 2 || !idempotencyKeyPattern.MatchString(moves[0].IdempotencyKey) || moves[0].IdempotencyKey == moves[1].IdempotencyKey {
		t.Fatalf("moves %+v: one fresh Idempotency-Key per move, and a conflict not retried", moves)
	}
}
