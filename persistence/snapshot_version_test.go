package persistence

import (
	"bytes"
	"errors"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
)

// snapshotAt writes accounts as a snapshot whose state relies on v.
func snapshotAt(t *testing.T, v actors.FeatureVersion, accounts []*actors.Account) []byte {
	t.Helper()
	var buf bytes.Buffer
	sw, err := NewSnapshotWriterFor(&buf, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accounts {
		encoded, err := EncodeAccount(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.WriteAccount(encoded); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A snapshot that needs only version 1 is written in format 2, byte for
// byte what a release before feature versions wrote and reads; a later
// version is written in format 3 and read back with its version; and one
// above this release's is refused as a newer release's, not loaded in part.
func TestSnapshotCarriesItsFeatureVersion(t *testing.T) {
	accounts := []*actors.Account{buildAccount(t, "acct-a", 2)}
	if v1 := snapshotAt(t, 1, accounts); !bytes.Equal(v1, writeSnapshot(t, accounts)) || v1[len(snapshotMagic)] != snapshotFormatV2 {
		t.Fatalf("a version-1 snapshot is not format 2")
	}
	got, _, v, err := ReadSnapshotVersioned(bytes.NewReader(snapshotAt(t, 2, accounts)))
	if err != nil || v != 2 || len(got) != 1 || jsonOf(t, got[0]) != jsonOf(t, accounts[0]) {
		t.Fatalf("a version-2 snapshot read back as version %d, %d accounts, %v", v, len(got), err)
	}
	if _, _, v, err := ReadSnapshotVersioned(bytes.NewReader(snapshotAt(t, 1, accounts))); err != nil || v != 1 {
		t.Fatalf("a format-2 snapshot reads as version %d, %v", v, err)
	}
	newer := snapshotAt(t, actors.CurrentFeatureVersion+1, accounts)
	if got, err := ReadSnapshot(bytes.NewReader(newer)); !errors.Is(err, ErrNewerRelease) || errors.Is(err, ErrCorrupt) || got != nil {
		t.Fatalf("a newer release's snapshot: %d accounts, %v", len(got), err)
	}
}
