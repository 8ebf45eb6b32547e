package site

import (
	"testing"

	"github.com/addrwatch/addrwatch/httpd/views"
)

func TestConfirmationsCountFromTheFollowersTip(t *testing.T) {
	h := int64(100)
	for _, c := range []struct {
		tx   views.Tx
		tip  int64
		want string
	}{
		{views.Tx{}, 200, "unconfirmed"},
		{views.Tx{Confirmed: true, BlockHeight: &h}, 0, "confirmed"},  // the follower knows no tip
		{views.Tx{Confirmed: true, BlockHeight: &h}, 99, "confirmed"}, // behind the upstream
		{views.Tx{Confirmed: true, BlockHeight: &h}, 100, "1 confirmation"},
		{views.Tx{Confirmed: true, BlockHeight: &h}, 105, "6 confirmations"},
	} {
		if got := confirmations(c.tx, c.tip); got != c.want {
			t.Errorf("height 100, tip %d: %q, want %q", c.tip, got, c.want)
		}
	}
}
