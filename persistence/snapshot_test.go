package persistence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors"
)

var snapshotAddresses = []string{
	"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
	"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
	"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
}

// buildAccount drives one account through actors.Apply, so its state has
// every part a snapshot carries: keys, a session, cards with grants, the
// first Space, idempotency records and audit events.
func buildAccount(t testing.TB, id string, cards int) *actors.Account {
	t.Helper()
	at := at0
	owner := actors.Principal{Kind: actors.PrincipalOwner}
	var a *actors.Account
	apply := func(p actors.Principal, payload actors.Payload, idem *actors.IdempotencyRequest) {
		t.Helper()
		at += int64(time.Second)
		var res actors.Result
		a, res = actors.Apply(a, &actors.Command{Account: id, At: at, Principal: p, Idempotency: idem, Payload: payload})
		if _, err := res.Outcome(); err != nil {
			t.Fatalf("%s: %T: %v", id, payload, err)
		}
	}
	apply(actors.Principal{Kind: actors.PrincipalSystem}, &actors.CreateAccount{
		Plan: actors.PlanExtended, OwnerSecretHash: sha("aws." + id + ".secret"),
		PasswordHash: "$argon2id$" + id, FirstSpaceID: id + "-space", Login: id + "@example.com",
	}, nil)
	apply(owner, &actors.CreateKey{KeyID: id + "-key", Name: "bot", Capability: actors.LevelWrite, Hash: sha("awk." + id)}, nil)
	apply(owner, &actors.CreateSession{SessionID: id + "-session", Hash: sha("awt." + id), ExpiresAt: at0 + int64(time.Hour), PasswordHash: "$argon2id$" + id}, nil)
	agent := actors.Principal{Kind: actors.PrincipalAgent, KeyID: id + "-key"}
	for i := range cards {
		cardID := fmt.Sprintf("%s-card-%d", id, i)
		apply(agent, &actors.CreatePortfolioCard{CardID: cardID, Address: snapshotAddresses[i%len(snapshotAddresses)],
			CardFields: actors.CardFields{Name: strPtr("Card ✓ " + cardID), Note: strPtr("line 1\nline 2")}},
			&actors.IdempotencyRequest{Token: "idempotency-" + cardID, Method: "POST", Path: "/v1/portfolio/cards", BodyHash: sha(cardID)})
		apply(owner, &actors.SetGrant{Resource: actors.ResourcePortfolioCard, ID: cardID, Level: actors.LevelRead}, nil)
	}
	return a
}

func writeSnapshot(t testing.TB, accounts []*actors.Account) []byte {
	t.Helper()
	var buf bytes.Buffer
	sw, err := NewSnapshotWriter(&buf)
	if err != nil {
		t.Fatalf("NewSnapshotWriter: %v", err)
	}
	for _, a := range accounts {
		encoded, err := EncodeAccount(a)
		if err != nil {
			t.Fatalf("EncodeAccount: %v", err)
		}
		if err := sw.WriteAccount(encoded); err != nil {
			t.Fatalf("WriteAccount: %v", err)
		}
	}
	if err := sw.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	return string(b)
}

func TestSnapshotRoundTrip(t *testing.T) {
	accounts := []*actors.Account{buildAccount(t, "acct-a", 3), buildAccount(t, "acct-b", 0), buildAccount(t, "acct-c", 1)}
	if accounts[0].Idempotency.Len() == 0 || len(accounts[0].Audit) == 0 || len(accounts[0].Keys) == 0 || len(accounts[0].Sessions) == 0 {
		t.Fatalf("fixture account lacks some state: %s", jsonOf(t, accounts[0]))
	}
	got, err := ReadSnapshot(bytes.NewReader(writeSnapshot(t, accounts)))
	if err != nil {
		t.Fatalf("ReadSnapshot: %v", err)
	}
	if len(got) != len(accounts) {
		t.Fatalf("read %d accounts, wrote %d", len(got), len(accounts))
	}
	for i := range accounts {
		if g, w := jsonOf(t, got[i]), jsonOf(t, accounts[i]); g != w {
			t.Errorf("account %d changed:\n got %s\nwant %s", i, g, w)
		}
	}
}

// TestSnapshotRestoredAccountBehavesTheSame checks what JSON equality alone
// would miss: a restored account authenticates and applies like the
// original.
func TestSnapshotRestoredAccountBehavesTheSame(t *testing.T) {
	orig := buildAccount(t, "acct-a", 2)
	got, err := ReadSnapshot(bytes.NewReader(writeSnapshot(t, []*actors.Account{orig})))
	if err != nil {
		t.Fatalf("ReadSnapshot: %v", err)
	}
	restored := got[0]
	cred := actors.Credential{Kind: actors.CredentialAPIKey, AccountID: "acct-a", ID: "acct-a-key", Hash: sha("awk.acct-a")}
	want := jsonOf(t, actors.RunQuery(orig, cred, actors.ListPortfolioQuery{}))
	if g := jsonOf(t, actors.RunQuery(restored, cred, actors.ListPortfolioQuery{})); g != want {
		t.Fatalf("restored account answers differently:\n got %s\nwant %s", g, want)
	}
	// A retried create replays from the restored idempotency record.
	retry := &actors.Command{Account: "acct-a", At: at0 + int64(time.Minute), Principal: actors.Principal{Kind: actors.PrincipalAgent, KeyID: "acct-a-key"},
		Idempotency: &actors.IdempotencyRequest{Token: "idempotency-acct-a-card-0", Method: "POST", Path: "/v1/portfolio/cards", BodyHash: sha("acct-a-card-0")},
		Payload:     &actors.CreatePortfolioCard{CardID: "other", Address: snapshotAddresses[0]}}
	_, res := actors.Apply(restored, retry)
	if _, err := res.Outcome(); err != nil || res.Status != 201 {
		t.Fatalf("replay on restored account = %+v, want the recorded 201", res)
	}
	if len(restored.Portfolio) != 2 {
		t.Fatalf("replay created a card: %d cards", len(restored.Portfolio))
	}
}

func TestSnapshotZeroAccounts(t *testing.T) {
	data := writeSnapshot(t, nil)
	got, err := ReadSnapshot(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadSnapshot(empty snapshot): %v", err)
	}
	if len(got) != 0 {
		t.Fatalf("read %d accounts from an empty snapshot", len(got))
	}
	// magic, format, terminator, empty cluster metadata, CRC-32C
	if want := len(snapshotMagic) + 1 + 1 + 1 + 4; len(data) != want {
		t.Fatalf("empty snapshot is %d bytes, want %d", len(data), want)
	}
}

func TestSnapshotWriterRefusesEmptyAccount(t *testing.T) {
	sw, err := NewSnapshotWriter(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// A zero length would read back as the terminator and silently drop
	// every account after it.
	if err := sw.WriteAccount(nil); err == nil {
		t.Fatal("WriteAccount(empty) succeeded")
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after < len(p) {
		return 0, errors.New("disk full")
	}
	w.after -= len(p)
	return len(p), nil
}

func TestSnapshotWriterReportsWriteErrors(t *testing.T) {
	big := bytes.Repeat([]byte(`"x"`), 64<<10) // larger than the writer's buffer
	for _, after := range []int{0, 10, 100 << 10} {
		sw, err := NewSnapshotWriter(&failingWriter{after: after})
		if err != nil {
			continue // the header write may fail at once
		}
		err = sw.WriteAccount(big)
		if err == nil {
			err = sw.Close()
		}
		if err == nil {
			t.Errorf("a writer failing after %d bytes: no error reported", after)
		}
	}
}

// smallSnapshot is a two-account snapshot small enough to corrupt at every
// byte.
func smallSnapshot(t testing.TB) []byte {
	a := &actors.Account{ID: "a1", PasswordHash: "h", Keys: []*actors.APIKey{{ID: "k", Capability: actors.LevelRead}}}
	b := &actors.Account{ID: "a2", Plan: actors.PlanExtended, Seq: 7}
	return writeSnapshot(t, []*actors.Account{a, b})
}

func TestReadSnapshotRejectsEverySingleByteCorruption(t *testing.T) {
	data := smallSnapshot(t)
	if _, err := ReadSnapshot(bytes.NewReader(data)); err != nil {
		t.Fatalf("fixture does not read: %v", err)
	}
	damaged := make([]byte, len(data))
	for i := range data {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			copy(damaged, data)
			damaged[i] ^= flip
			got, err := ReadSnapshot(bytes.NewReader(damaged))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d ^ %#x: ReadSnapshot = %d accounts, %v; want ErrCorrupt", i, flip, len(got), err)
			}
			if got != nil {
				t.Fatalf("byte %d ^ %#x: accounts returned with an error", i, flip)
			}
		}
	}
}

func TestReadSnapshotRejectsEveryTruncation(t *testing.T) {
	data := smallSnapshot(t)
	for n := 0; n < len(data); n++ {
		got, err := ReadSnapshot(bytes.NewReader(data[:n]))
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("first %d of %d bytes: ReadSnapshot = %d accounts, %v; want ErrCorrupt", n, len(data), len(got), err)
		}
	}
}

func TestReadSnapshotRejectsAppendedBytes(t *testing.T) {
	data := smallSnapshot(t)
	for _, extra := range [][]byte{{0}, []byte("AWSNAP"), data} {
		if _, err := ReadSnapshot(bytes.NewReader(append(append([]byte{}, data...), extra...))); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("snapshot + %q: err = %v, want ErrCorrupt", extra, err)
		}
	}
}

// withChecksum returns body followed by its valid CRC-32C, so a test can
// reach the checks that run after the checksum.
func withChecksum(body []byte) []byte {
	var buf bytes.Buffer
	buf.Write(body)
	crc := crc32.Checksum(body, castagnoli)
	buf.Write([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	return buf.Bytes()
}

func TestReadSnapshotRejectsWellSummedNonsense(t *testing.T) {
	head := append(append([]byte{}, snapshotMagic...), snapshotFormatV1)
	cases := []struct {
		name string
		body []byte
	}{
		{"other format", append(append([]byte{}, snapshotMagic...), 2, 0)},
		{"no terminator", head},
		{"unterminated length", append(append([]byte{}, head...), 0x80)},
		{"length beyond input", append(append([]byte{}, head...), 0x10, '{', '}', 0)},
		{"length above the bound", append(append([]byte{}, head...), 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0)},
		{"account is not JSON", append(append([]byte{}, head...), 2, 'x', 'y', 0)},
		{"account is an array", append(append([]byte{}, head...), 2, '[', ']', 0)},
		{"bad hash in account", accountRecord(head, `{"owner_secret_hash":"abcd"}`)},
		{"unknown plan in account", accountRecord(head, `{"plan":"gold"}`)},
		{"bytes after the terminator", append(append([]byte{}, head...), 2, '{', '}', 0, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadSnapshot(bytes.NewReader(withChecksum(tc.body)))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("ReadSnapshot = %d accounts, %v; want ErrCorrupt", len(got), err)
			}
		})
	}
}

// accountRecord is head, one length-prefixed account and the terminator.
func accountRecord(head []byte, account string) []byte {
	b := append([]byte{}, head...)
	b = append(b, byte(len(account)))
	b = append(b, account...)
	return append(b, 0)
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("i/o error") }

func TestReadSnapshotReportsReadErrors(t *testing.T) {
	if _, err := ReadSnapshot(errReader{}); err == nil {
		t.Fatal("a failing reader gave no error")
	}
}

// FuzzReadSnapshot checks that no input panics the reader, and that a
// snapshot it accepts reads the same after being written back.
func FuzzReadSnapshot(f *testing.F) {
	f.Add(smallSnapshot(f))
	f.Add(writeSnapshot(f, nil))
	f.Add(writeSnapshot(f, []*actors.Account{buildAccount(f, "acct-f", 1)}))
	f.Add(withChecksum(append(append([]byte{}, snapshotMagic...), snapshotFormatV1, 2, '{', '}', 0)))
	f.Add([]byte("AWSNAP"))
	f.Fuzz(func(t *testing.T, data []byte) {
		accounts, err := ReadSnapshot(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		again, err := ReadSnapshot(bytes.NewReader(writeSnapshot(t, accounts)))
		if err != nil {
			t.Fatalf("accepted snapshot does not survive a rewrite: %v", err)
		}
		if g, w := jsonOf(t, again), jsonOf(t, accounts); g != w {
			t.Fatalf("rewrite changed the accounts:\n got %s\nwant %s", g, w)
		}
	})
}

func BenchmarkSnapshotWrite1000Accounts(b *testing.B) {
	encoded := make([][]byte, 1000)
	total := 0
	for i := range encoded {
		a := buildAccount(b, fmt.Sprintf("acct-%04d", i), 3)
		e, err := EncodeAccount(a)
		if err != nil {
			b.Fatal(err)
		}
		encoded[i] = e
		total += len(e)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		sw, err := NewSnapshotWriter(io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range encoded {
			if err := sw.WriteAccount(e); err != nil {
				b.Fatal(err)
			}
		}
		if err := sw.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSnapshotRead1000Accounts(b *testing.B) {
	accounts := make([]*actors.Account, 1000)
	for i := range accounts {
		accounts[i] = buildAccount(b, fmt.Sprintf("acct-%04d", i), 3)
	}
	data := writeSnapshot(b, accounts)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadSnapshot(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestOpenStoresHasState(t *testing.T) {
	for _, kind := range []LogStore{LogWAL, LogBolt} {
		t.Run(string(kind), func(t *testing.T) { testOpenStoresHasState(t, kind) })
	}
}

func testOpenStoresHasState(t *testing.T, kind LogStore) {
	dir := filepath.Join(t.TempDir(), "data", "node1") // OpenStores creates it
	logger := hclog.NewNullLogger()

	s, err := OpenStores(dir, kind, logger)
	if err != nil {
		t.Fatalf("OpenStores: %v", err)
	}
	has, err := s.HasState()
	if err != nil || has {
		t.Fatalf("new data dir: HasState = %v, %v; want false", has, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("data dir mode %v is open to other users", perm)
	}
	store := map[LogStore]string{LogWAL: "wal", LogBolt: "raft.db"}[kind]
	for _, name := range []string{store, "snapshots"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	entry := mustEncode(t, sampleCommands(t)[:1])
	if err := s.Log.StoreLog(&raft.Log{Index: 1, Term: 1, Type: raft.LogCommand, Data: entry}); err != nil {
		t.Fatalf("StoreLog: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s, err = OpenStores(dir, kind, logger)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	has, err = s.HasState()
	if err != nil || !has {
		t.Fatalf("after a stored entry: HasState = %v, %v; want true", has, err)
	}
	var got raft.Log
	if err := s.Log.GetLog(1, &got); err != nil {
		t.Fatalf("GetLog: %v", err)
	}
	if !bytes.Equal(got.Data, entry) {
		t.Fatal("the stored entry changed across a reopen")
	}
	if _, err := DecodeCommands(got.Data); err != nil {
		t.Fatalf("stored entry does not decode: %v", err)
	}
}

func TestOpenStoresStableStoreAloneIsState(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStores(dir, LogWAL, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// raft records the term before it appends anything: a node that voted
	// has state even with an empty log.
	if err := s.Stable.SetUint64([]byte("CurrentTerm"), 3); err != nil {
		t.Fatal(err)
	}
	if has, err := s.HasState(); err != nil || !has {
		t.Fatalf("HasState = %v, %v; want true", has, err)
	}
}

func TestOpenStoresOnAFileFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := OpenStores(file, LogWAL, hclog.NewNullLogger()); err == nil {
		s.Close()
		t.Fatal("OpenStores on a regular file succeeded")
	}
}

func TestSnapshotCarriesClusterMetadata(t *testing.T) {
	var buf bytes.Buffer
	sw, err := NewSnapshotWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := EncodeAccount(&actors.Account{ID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.WriteAccount(enc); err != nil {
		t.Fatal(err)
	}
	meta := []byte(`{"secret":"s","nodes":{"n1":{"http":"127.0.0.1:8080"}}}`)
	if err := sw.CloseWithMeta(meta); err != nil {
		t.Fatal(err)
	}
	accounts, got, err := ReadSnapshotWithMeta(bytes.NewReader(buf.Bytes()))
	if err != nil || len(accounts) != 1 || accounts[0].ID != "a1" || string(got) != string(meta) {
		t.Fatalf("read %v %q %v", accounts, got, err)
	}
	// Every truncation of it is refused.
	for n := range buf.Len() {
		if _, _, err := ReadSnapshotWithMeta(bytes.NewReader(buf.Bytes()[:n])); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: %v", n, err)
		}
	}
}
