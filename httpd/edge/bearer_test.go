package edge

import "testing"

func TestBearerToken(t *testing.T) {
	accepts := map[string]string{
		"Bearer aws.a.s":    "aws.a.s",
		"bearer aws.a.s":    "aws.a.s",
		"BEARER aws.a.s":    "aws.a.s",
		"BeArEr aws.a.s":    "aws.a.s",
		"Bearer   aws.a.s ": "aws.a.s",
		"Bearer x":          "x",
	}
	for header, want := range accepts {
		if got, ok := BearerToken([]byte(header)); !ok || got != want {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", header, got, ok, want)
		}
	}
	for _, header := range []string{"", "Bearer", "Bearer ", "Bearerx aws.a.s", "Basic YWxhZGRpbjpvcGVu", "Token aws.a.s", "aws.a.s", " Bearer aws.a.s", "Bearer\taws.a.s", "Beare aws.a.s"} {
		if got, ok := BearerToken([]byte(header)); ok {
			t.Errorf("BearerToken(%q) accepted %q", header, got)
		}
	}
}
