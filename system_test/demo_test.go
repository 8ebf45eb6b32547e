package system_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoPrintsAWorkingCurl is what `make run` promises a newcomer: a
// demo account whose printed curl for /v1/me works, and whose printed login
// and password sign in, printed again on the next start of the same data
// dir.
func TestDemoPrintsAWorkingCurl(t *testing.T) {
	t.Parallel()
	t.Run("one group", func(t *testing.T) { testDemoPrintsAWorkingCurl(t) })
	t.Run("sharded", func(t *testing.T) { testDemoPrintsAWorkingCurl(t, "--groups", "3") })
}

func testDemoPrintsAWorkingCurl(t *testing.T, extra ...string) {
	args := append([]string{"--demo"}, extra...)
	s := startServer(t, args...)
	curl := regexp.MustCompile(`curl -s -H 'Authorization: Bearer (awk\.[a-z0-9.]+)' (http://\S+)/v1/me`)
	m := waitForLog(t, s, curl)
	if m[2] != s.URL {
		t.Fatalf("curl targets %s, want %s", m[2], s.URL)
	}
	r := do(t, "GET", s.URL+"/v1/me", m[1], nil)
	expect(t, r, http.StatusOK, "")
	if r.JSON(t)["capability"] != "read" {
		t.Fatalf("the demo curl should use the read key: %s", r.Body)
	}
	write := regexp.MustCompile(`write key:\s+(awk\.[a-z0-9.]+)`).FindStringSubmatch(s.logs.String())
	if write == nil {
		t.Fatalf("no write key printed:\n%s", s.logs.String())
	}
	r = do(t, "POST", s.URL+"/v1/portfolio/cards", write[1], map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"})
	expect(t, r, http.StatusCreated, "")

	// The site's sign-in: the printed login and password work.
	site := regexp.MustCompile(`site:\s+(http://\S+)/ `).FindStringSubmatch(s.logs.String())
	login := regexp.MustCompile(`login:\s+(\S+)`).FindStringSubmatch(s.logs.String())
	password := regexp.MustCompile(`password:\s+(\S+)`).FindStringSubmatch(s.logs.String())
	if site == nil || site[1] != s.URL || login == nil || login[1] != "demo" || password == nil {
		t.Fatalf("no site, login demo and password printed:\n%s", s.logs.String())
	}
	r = do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"login": login[1], "password": password[1]})
	expect(t, r, http.StatusCreated, "")

	s.stop()
	s.start(args...)
	again := waitForLog(t, s, curl)
	if again[1] != m[1] {
		t.Fatalf("restart printed a different key")
	}
	expect(t, do(t, "GET", s.URL+"/v1/me", again[1], nil), http.StatusOK, "")
}

// waitForLog waits until the server's output matches re.
func waitForLog(t *testing.T, s *server, re *regexp.Regexp) []string {
	t.Helper()
	// The demo account is created just after the server reports ready.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(s.logs.String()); m != nil {
			return m
		}
	}
	t.Fatalf("output never matched %s:\n%s", re, strings.TrimSpace(s.logs.String()))
	return nil
}
