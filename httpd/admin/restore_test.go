package admin

import "testing"

func TestRestoreIsKnownFromTheHead(t *testing.T) {
	for _, c := range []struct {
		method, uri string
		want        bool
	}{
		{"POST", "/admin/v1/restore", true},
		{"POST", "/admin/v1/restore?x=1", true},
		{"GET", "/admin/v1/restore", false},
		{"POST", "/admin/v1/restored", false},
		{"POST", "/admin/v1/accounts", false},
	} {
		if got := isRestore([]byte(c.method), []byte(c.uri)); got != c.want {
			t.Errorf("isRestore(%s %s) = %v", c.method, c.uri, got)
		}
	}
}
