package site

import "testing"

// An amount typed in BTC is read exactly, or refused with what is wrong.
func TestParseBTC(t *testing.T) {
	for typed, want := range map[string]int64{"": 0, "0": 0, "1": 100_000_000, "0.001": 100_000, ".5": 50_000_000, "0.00000001": 1, " 2.5 BTC ": 250_000_000, "21000000": 21_000_000 * 100_000_000} {
		if got, problem := parseBTC(typed); got != want || problem != "" {
			t.Errorf("%q: %d %q, want %d", typed, got, problem, want)
		}
	}
	for _, typed := range []string{"abc", "-1", "1.2.3", ".", "0.000000001", "1e3", "1,5", "21000000.00000001", "999999999"} {
		if _, problem := parseBTC(typed); problem == "" {
			t.Errorf("%q was read as an amount", typed)
		}
	}
}
