package system_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The owner credential limits, end to end. The harness starts servers with
// --limits off, which is for load tests of the Agent API: these limits
// apply all the same. The free allowance before a back-off is 10 failures.
const olFreeFailures = 10

// olRetryAfter checks a 429 RATE_LIMITED in the error shape and returns its
// Retry-After in seconds.
func olRetryAfter(t testing.TB, r response) int {
	t.Helper()
	owExpectError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Fatalf("429 with Retry-After %q, want whole seconds", r.Header.Get("Retry-After"))
	}
	return secs
}

// olFrom names the client through the trusted proxy header.
func olFrom(ip string) []string { return []string{"X-Forwarded-For", ip} }

// Finding: 30 wrong passwords in a row were all plain 401s with no
// back-off. Now the client backs off, even a right password is refused
// until Retry-After has passed, and then it works.
func TestOwnerSignInBacksOffAfterRepeatedFailures(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	var statuses []int
	// A back-off that has run out lets the next try through (a 401 that
	// lengthens it): on a loaded machine 30 tries can outlast one. Its
	// end is at most Retry-After after the 429's request was sent, and at
	// least that less the second Retry-After rounds up.
	var limitedAt time.Time
	limitedFor := 0
	for i := range 30 {
		sent := time.Now()
		r := owSignIn(t, s, a.ID, "not the password")
		statuses = append(statuses, r.Status)
		want := http.StatusUnauthorized
		if i >= olFreeFailures+1 {
			want = http.StatusTooManyRequests
			if r.Status == http.StatusUnauthorized && limitedFor > 0 && sent.Sub(limitedAt) >= time.Duration(limitedFor-1)*time.Second {
				want = http.StatusUnauthorized
			}
		}
		if r.Status != want {
			t.Fatalf("wrong password %d answered %d, want %d (all: %v)", i+1, r.Status, want, statuses)
		}
		if r.Status == http.StatusTooManyRequests {
			limitedAt, limitedFor = sent, olRetryAfter(t, r)
		}
	}
	r := owSignIn(t, s, a.ID, a.Password)
	wait := olRetryAfter(t, r)
	time.Sleep(time.Duration(wait) * time.Second)
	expect(t, owSignIn(t, s, a.ID, a.Password), http.StatusCreated, "")
}

// Finding: 30 guessed owner secrets in a row were all plain 401s. Now the
// client backs off on that account; the owner, from another client, is
// not held back.
func TestOwnerSecretGuessesBackOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--trusted-proxies", "127.0.0.0/8")
	a := s.createAccount(t, "base")
	attacker, owner := olFrom("203.0.113.20"), olFrom("198.51.100.20")
	limited := 0
	for i := range 30 {
		r := do(t, "GET", s.URL+"/owner/v1/keys", fmt.Sprintf("aws.%s.guess%d", a.ID, i), nil, attacker...)
		switch r.Status {
		case http.StatusUnauthorized:
			owExpectUnauthorized(t, r)
		case http.StatusTooManyRequests:
			olRetryAfter(t, r)
			limited++
		default:
			t.Fatalf("guess %d: status %d %s", i, r.Status, r.Body)
		}
	}
	if limited != 30-olFreeFailures-1 {
		t.Fatalf("%d of 30 guessed owner secrets were refused with 429, want %d", limited, 30-olFreeFailures-1)
	}
	olRetryAfter(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil, attacker...))
	expect(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil, owner...), http.StatusOK, "")
}

// Guesses spread over many clients meet the account's back-off, which is
// capped at 2 s; the owner secret keeps working throughout, so the owner
// cannot be locked out.
func TestOwnerAccountBackOffIsCappedAndSparesTheOwnerSecret(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--trusted-proxies", "127.0.0.0/8")
	a := s.createAccount(t, "base")
	limited := 0
	for i := range 25 {
		r := do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"account_id": a.ID, "password": "not the password"}, olFrom(fmt.Sprintf("192.0.2.%d", i+1))...)
		if r.Status == http.StatusTooManyRequests {
			if secs := olRetryAfter(t, r); secs > 2 {
				t.Fatalf("account back-off Retry-After %d s, want at most 2", secs)
			}
			limited++
		} else {
			owExpectError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", "")
		}
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil, olFrom("198.51.100.30")...), http.StatusOK, "")
	}
	if limited == 0 {
		t.Fatal("25 wrong passwords from 25 clients on one account: none refused with 429")
	}
}

// Finding: eight bcrypt sign-ins at once pushed other owner requests from
// 0.5 ms to 240 ms. The hashes that run at once are bounded and so is the
// queue: many sign-ins at once (from many clients, on accounts under their
// own allowance) see some turned away with 503 and Retry-After, and the
// rest succeed. Before the bound every one of them ran at once.
func TestOwnerPasswordHashesAreBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--trusted-proxies", "127.0.0.0/8")
	const accounts, perAccount = 4, 8 // under each account's free allowance
	var list []account
	for range accounts {
		list = append(list, s.createAccount(t, "base"))
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make(chan response, accounts*perAccount)
	for i := range accounts * perAccount {
		a := list[i%accounts]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results <- do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"account_id": a.ID, "password": a.Password}, olFrom(fmt.Sprintf("192.0.2.%d", i+1))...)
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	created, busy := 0, 0
	for r := range results {
		switch r.Status {
		case http.StatusCreated:
			created++
		case http.StatusServiceUnavailable:
			owExpectError(t, r, http.StatusServiceUnavailable, "HTTP_ERROR", "")
			if r.Header.Get("Retry-After") == "" {
				t.Fatalf("503 without Retry-After: %s", r.Body)
			}
			busy++
		default:
			t.Fatalf("sign-in answered %d: %s", r.Status, r.Body)
		}
	}
	if busy == 0 || created == 0 {
		t.Fatalf("%d sign-ins at once: %d signed in, %d turned away; want some of each", accounts*perAccount, created, busy)
	}
}
