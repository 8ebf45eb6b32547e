package client

import (
	"context"
	"net/http"
	"testing"
)

const spacesPath = "/v1/bookmark-spaces"

func TestCreateSpaceReadsTheRevisionOnlyWhenNoneIsGiven(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + spacesPath: func(fakeRequest) (int, string) {
			return fakeJSON(SpaceList{BookmarkRevision: "br-7", Spaces: []Space{}})
		},
		"POST " + spacesPath: func(r fakeRequest) (int, string) {
			return http.StatusCreated, `{"bookmark_revision":"br-8","space":{"id":"s2","name":"` + r.Body["name"].(string) + `","type":"sheet","effective_access":"write","version":"sv-1"}}`
		},
	})
	ctx := context.Background()
	got, err := a.CreateSpace(ctx, SpaceCreateRequest{Name: "Ledger", Type: "sheet"})
	if err != nil || got.Space.Id != "s2" || got.BookmarkRevision != "br-8" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := a.CreateSpace(ctx, SpaceCreateRequest{Name: "Other", Type: "sheet", ExpectedBookmarkRevision: "br-mine"}); err != nil {
		t.Fatal(err)
	}
	posts := f.sent("POST " + spacesPath)
	if len(f.sent("GET "+spacesPath)) != 1 || len(posts) != 2 {
		t.Fatalf("requests %+v", f.requests)
	}
	if posts[0].Body["expected_bookmark_revision"] != "br-7" || posts[1].Body["expected_bookmark_revision"] != "br-mine" {
		t.Fatalf("creates %+v", posts)
	}
	if !idempotencyKeyPattern.MatchString(posts[0].IdempotencyKey) || posts[0].IdempotencyKey == posts[1].IdempotencyKey {
		t.Fatalf("Idempotency-Keys %q, %q: want one fresh key per create", posts[0].IdempotencyKey, posts[1].IdempotencyKey)
	}
}

func TestRenameSpaceRetriesOnceWithTheCurrentRevision(t *testing.T) {
	rename := func(r fakeRequest) (int, string) {
		if r.Body["expected_bookmark_revision"] != "br-1" {
			return fakeError(http.StatusConflict, "STALE_VERSION")
		}
		return fakeJSON(SpaceEnvelope{BookmarkRevision: "br-2", Space: Space{Id: "s1", Name: r.Body["name"].(string)}})
	}
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){"GET " + spacePath: spaceAt("sv-1"), "PATCH " + spacePath: rename})
	got, err := a.RenameSpace(context.Background(), "s1", "br-0", "Cold", nil)
	if err != nil || got.Space.Name != "Cold" || got.BookmarkRevision != "br-2" {
		t.Fatalf("%+v %v", got, err)
	}
	if n := len(f.sent("PATCH " + spacePath)); n != 2 {
		t.Fatalf("%d PATCHes, want 2", n)
	}

	// apply refuses the Space as it is now: no second PATCH.
	a, f = newFake(t, map[string]func(fakeRequest) (int, string){"GET " + spacePath: spaceAt("sv-1"), "PATCH " + spacePath: rename})
	if _, err := a.RenameSpace(context.Background(), "s1", "br-0", "Cold", func(now Space) bool { return now.Name == "Hot" }); !IsCode(err, "STALE_VERSION") || len(f.sent("PATCH "+spacePath)) != 1 {
		t.Fatalf("error %v", err)
	}
}

// A delete confirms the cards' deletion, carries an Idempotency-Key, and
// is never retried on a conflict.
func TestDeleteSpaceConfirmsAndDoesNotRetry(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"DELETE " + spacePath: func(fakeRequest) (int, string) { return fakeError(http.StatusConflict, "STALE_VERSION") },
		"GET " + spacePath:    spaceAt("sv-2"),
	})
	if _, err := a.DeleteSpace(context.Background(), "s1", "br-1", "sv-1"); !IsCode(err, "STALE_VERSION") {
		t.Fatalf("error %v", err)
	}
	dels := f.sent("DELETE " + spacePath)
	if len(dels) != 1 || len(f.sent("GET "+spacePath)) != 0 {
		t.Fatalf("requests %+v", f.requests)
	}
	d := dels[0]
	if d.Body["confirm_delete_cards"] != true || d.Body["expected_bookmark_revision"] != "br-1" || d.Body["expected_version"] != "sv-1" || !idempotencyKeyPattern.MatchString(d.IdempotencyKey) {
		t.Fatalf("delete %+v", d)
	}
}
