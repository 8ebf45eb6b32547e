package client

import (
	"context"
	"net/http"
	"regexp"
	"testing"
)

const (
	spacePath = "/v1/bookmark-spaces/s1"
	cardsPath = spacePath + "/cards"
	cardPath  = cardsPath + "/c1"
)

// idempotencyKeyPattern is the spec's: 16 to 128 characters of a safe set.
var idempotencyKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]{16,128}$`)

// spaceAt answers a Space read with version.
func spaceAt(version string) func(fakeRequest) (int, string) {
	return func(fakeRequest) (int, string) {
		return fakeJSON(SpaceEnvelope{BookmarkRevision: "br-1", Space: Space{Id: "s1", Name: "Watch", Type: "bitcoin", EffectiveAccess: "write", Version: version}})
	}
}

// Validation rule 5: the create sends the Space's current version, read
// just before; each intended create has an Idempotency-Key of its own.
func TestCreateBookmarkCardSendsTheSpaceVersionAndAnIdempotencyKey(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"GET " + spacePath: spaceAt("sv-3"),
		"POST " + cardsPath: func(r fakeRequest) (int, string) {
			return http.StatusCreated, `{"card":{"id":"c1","version":"cv-1","effective_access":"write","address":"` + r.Body["address"].(string) + `","name":"","note":"","color_key":"amber"},"space":{"id":"s1","version":"sv-4"}}`
		},
	})
	ctx := context.Background()
	for _, address := range []string{"bc1qfirst", "bc1qsecond"} {
		got, err := a.CreateBookmarkCard(ctx, "s1", BookmarkCreateRequest{Address: address})
		if err != nil || got.Card.Id != "c1" || got.Space.Version != "sv-4" {
			t.Fatalf("%+v %v", got, err)
		}
	}
	posts := f.sent("POST " + cardsPath)
	if len(posts) != 2 || len(f.sent("GET "+spacePath)) != 2 {
		t.Fatalf("requests %+v", f.requests)
	}
	for _, p := range posts {
		if p.Body["expected_space_version"] != "sv-3" || !idempotencyKeyPattern.MatchString(p.IdempotencyKey) {
			t.Fatalf("create %+v: want the Space's version and an Idempotency-Key", p)
		}
	}
	if posts[0].IdempotencyKey == posts[1].IdempotencyKey {
		t.Fatal("two intended creates shared one Idempotency-Key")
	}
}

// A version the caller gives is the one sent: the Space is not read again.
func TestCreateBookmarkCardKeepsTheCallersVersion(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"POST " + cardsPath: func(fakeRequest) (int, string) { return fakeError(http.StatusConflict, "STALE_VERSION") },
	})
	_, err := a.CreateBookmarkCard(context.Background(), "s1", BookmarkCreateRequest{Address: "bc1q", ExpectedSpaceVersion: "sv-old"})
	if !IsCode(err, "STALE_VERSION") {
		t.Fatalf("error %v", err)
	}
	if posts := f.sent("POST " + cardsPath); len(posts) != 1 || posts[0].Body["expected_space_version"] != "sv-old" || len(f.sent("GET "+spacePath)) != 0 {
		t.Fatalf("requests %+v: a create's conflict is not retried", f.requests)
	}
}

// cardAt answers a bookmark card read with version.
func cardAt(id, version string) func(fakeRequest) (int, string) {
	return func(fakeRequest) (int, string) {
		return fakeJSON(BookmarkEnvelope{Card: Card{Id: id, Version: version, Name: "owner's", EffectiveAccess: "write", ColorKey: "amber"}, Space: SpaceRef{Id: "s1", Version: "sv-9"}})
	}
}

func TestUpdateBookmarkCardFollowsTheStaleVersionRule(t *testing.T) {
	patch := func(r fakeRequest) (int, string) {
		if r.Body["expected_version"] != "cv-2" {
			return fakeError(http.StatusConflict, "STALE_VERSION")
		}
		return fakeJSON(BookmarkEnvelope{Card: Card{Id: "c1", Version: "cv-3", Note: r.Body["note"].(string)}, Space: SpaceRef{Id: "s1", Version: "sv-10"}})
	}
	note := "checked"
	ctx := context.Background()

	a, f := newFake(t, map[string]func(fakeRequest) (int, string){"GET " + cardPath: cardAt("c1", "cv-2"), "PATCH " + cardPath: patch})
	got, err := a.UpdateBookmarkCard(ctx, "s1", "c1", "cv-1", CardPatchRequest{Note: &note}, nil)
	if err != nil || got.Card.Note != note || got.Space.Version != "sv-10" {
		t.Fatalf("%+v %v", got, err)
	}
	if patches := f.sent("PATCH " + cardPath); len(patches) != 2 || patches[0].Body["expected_version"] != "cv-1" {
		t.Fatalf("PATCHes %+v", patches)
	}

	// The change no longer applies to the card as it is now: the conflict
	// stands, with no second PATCH.
	a, f = newFake(t, map[string]func(fakeRequest) (int, string){"GET " + cardPath: cardAt("c1", "cv-2"), "PATCH " + cardPath: patch})
	_, err = a.UpdateBookmarkCard(ctx, "s1", "c1", "cv-1", CardPatchRequest{Note: &note}, func(now Card) bool { return now.Name == "mine" })
	if !IsCode(err, "STALE_VERSION") || len(f.sent("PATCH "+cardPath)) != 1 {
		t.Fatalf("error %v after %d PATCHes", err, len(f.sent("PATCH "+cardPath)))
	}

	// The card is gone (moved or deleted): the re-read's NOT_FOUND is the
	// answer.
	a, f = newFake(t, map[string]func(fakeRequest) (int, string){"PATCH " + cardPath: patch})
	if _, err = a.UpdateBookmarkCard(ctx, "s1", "c1", "cv-1", CardPatchRequest{Note: &note}, nil); !IsCode(err, "NOT_FOUND") || len(f.sent("PATCH "+cardPath)) != 1 {
		t.Fatalf("error %v", err)
	}
}

func TestDeleteBookmarkCardSendsAnIdempotencyKeyAndDoesNotRetry(t *testing.T) {
	a, f := newFake(t, map[string]func(fakeRequest) (int, string){
		"DELETE " + cardPath: func(fakeRequest) (int, string) { return fakeError(http.StatusConflict, "STALE_VERSION") },
		"GET " + cardPath:    cardAt("c1", "cv-2"),
	})
	if err := a.DeleteBookmarkCard(context.Background(), "s1", "c1", "cv-1"); !IsCode(err, "STALE_VERSION") {
		t.Fatalf("error %v", err)
	}
	dels := f.sent("DELETE " + cardPath)
	if len(dels) != 1 || dels[0].Body["expected_version"] != "cv-1" || !idempotencyKeyPattern.MatchString(dels[0].IdempotencyKey) || len(f.sent("GET "+cardPath)) != 0 {
		t.Fatalf("requests %+v", f.requests)
	}
}
