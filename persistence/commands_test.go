package persistence

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// commandKindsMax is the highest Kind this build knows. The round-trip test
// asserts that NewPayload knows every kind up to it and none after it, so a
// new kind that is not added here fails loudly instead of going untested.
const commandKindsMax = actors.KindSetExplorer

// at0 is the leader time of the first test command.
var at0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()

func sha(s string) actors.Hash { return sha256.Sum256([]byte(s)) }

func strPtr(s string) *string { return &s }

// samplePayload returns a payload of kind k with every field set to a value
// the edge could send, so a field the encoding drops shows up as a
// difference after the round trip.
func samplePayload(t testing.TB, k actors.Kind) actors.Payload {
	t.Helper()
	p, known := actors.NewPayload(k)
	if !known {
		t.Fatalf("NewPayload(%d) does not know a kind up to %d", k, commandKindsMax)
	}
	if p.Kind() != k {
		t.Fatalf("NewPayload(%d) returned a payload of kind %d", k, p.Kind())
	}
	switch p := p.(type) {
	case *actors.CreateAccount:
		p.Plan = actors.PlanExtended
		p.OwnerSecretHash = sha("aws.acct-1.owner-secret")
		p.PasswordHash = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo"
		p.FirstSpaceID = "sp7kq2m4x5n6p7q8r9s"
		p.Login = "Alice.Smith+watch@example.com"
	case *actors.DeleteAccount:
	case *actors.CreateKey:
		p.KeyID = "k3j5x7m2q4w6e8r0t2y"
		p.Name = "Ledger bot — read only"
		p.Capability = actors.LevelRead
		p.Hash = sha("awk.acct-1.k3j5x7m2q4w6e8r0t2y.secret")
	case *actors.RevokeKey:
		p.KeyID = "k3j5x7m2q4w6e8r0t2y"
	case *actors.CreateSession:
		p.SessionID = "s9d8f7g6h5j4k3l2m1n"
		p.Hash = sha("awt.acct-1.s9d8f7g6h5j4k3l2m1n.secret")
		p.ExpiresAt = at0 + int64(30*time.Minute)
		p.ExpiresAtMax = at0 + int64(24*time.Hour)
		p.PasswordHash = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo"
	case *actors.DeleteSession:
	case *actors.SetGrant:
		p.Resource = actors.ResourceSpace
		p.ID = "sp7kq2m4x5n6p7q8r9s"
		p.Level = actors.LevelWrite
	case *actors.SetPlan:
		p.Plan = actors.PlanExtended
	case *actors.ChangePassword:
		p.ExpectedPasswordHash = "$argon2id$old"
		p.NewPasswordHash = "$argon2id$new"
		secret := sha("aws.acct-1.after-password-change")
		p.NewOwnerSecretHash = &secret
	case *actors.RotateOwnerSecret:
		p.NewHash = sha("aws.acct-1.rotated")
		p.ExpectedPasswordHash = "$argon2id$current"
	case *actors.CreatePortfolioCard:
		p.CardID = "c1a2b3c4d5e6f7g8h9i"
		p.Address = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
		p.Name = strPtr("Cold storage")
		p.Note = strPtr("multi-line\nnote with \"quotes\", <html> & ünïcödé")
		p.ColorKey = strPtr("teal")
	case *actors.UpdatePortfolioCard:
		p.CardID = "c1a2b3c4d5e6f7g8h9i"
		p.ExpectedVersion = "v42"
		p.Name = strPtr("")         // sent but empty: must stay distinct from not sent
		p.ColorKey = strPtr("rose") // Note stays nil: not sent
	case *actors.DeletePortfolioCard:
		p.CardID = "c1a2b3c4d5e6f7g8h9i"
		p.ExpectedVersion = "v43"
	case *actors.CreateSpace:
		p.SpaceID = "sp2b3c4d5e6f7g8h9j"
		p.ExpectedBookmarkRevision = "v7"
		p.Name = "Exchanges — ünïcödé"
		p.Type = actors.SpaceAltcoin
	case *actors.UpdateSpace:
		p.SpaceID = "sp2b3c4d5e6f7g8h9j"
		p.ExpectedBookmarkRevision = "v8"
		p.Name = strPtr("Renamed")
		sheet := actors.SpaceSheet
		p.Type = &sheet
	case *actors.DeleteSpace:
		p.SpaceID = "sp2b3c4d5e6f7g8h9j"
		p.ExpectedBookmarkRevision = "v9"
		p.ExpectedVersion = "v5"
		p.ConfirmDeleteCards = true
	case *actors.CreateBookmarkCard:
		p.CardID = "b1c2d3e4f5g6h7i8j9k"
		p.SpaceID = "sp2b3c4d5e6f7g8h9j"
		p.ExpectedSpaceVersion = "v11"
		p.Address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
		p.CoinID = strPtr("ethereum")
		p.Note = strPtr("hot wallet")
	case *actors.UpdateBookmarkCard:
		p.SpaceID = "sp2b3c4d5e6f7g8h9j"
		p.CardID = "b1c2d3e4f5g6h7i8j9k"
		p.ExpectedVersion = "v12"
		p.ColorKey = strPtr("cyan")
	case *actors.DeleteBookmarkCard:
		p.SpaceID = "sp2b3c4d5e6f7g8h9j"
		p.CardID = "b1c2d3e4f5g6h7i8j9k"
		p.ExpectedVersion = "v13"
	case *actors.MoveCard:
		p.NewCardID = "n1m2b3v4c5x6z7l8k9j"
		p.SourceKind = actors.LocationBookmark
		p.SourceID = "b1c2d3e4f5g6h7i8j9k"
		p.SourceSpaceID = "sp2b3c4d5e6f7g8h9j"
		p.DestinationKind = actors.LocationBookmark
		p.DestinationSpaceID = "sp7kq2m4x5n6p7q8r9s"
		p.ExpectedSourceVersion = "v14"
		p.ExpectedDestinationVersion = strPtr("v15")
	case *actors.PatchSheet:
		p.SpaceID = "sh3e4r5t6y7u8i9o0p"
		p.ExpectedRevision = 17
		p.EnforceBudget = true
		p.Headers = []string{"Address", "Blockchain", "Transaction ID", "Date", "Remarks"}
		p.Rows = []actors.SheetRowInput{{Index: 0, Cells: []string{"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "bitcoin", "", "2026-01-02", "=SUM(A1)"}}, {Index: 999, Cells: []string{"", "", "", "", ""}}}
	case *actors.PutSheetRow:
		p.SpaceID = "sh3e4r5t6y7u8i9o0p"
		p.ExpectedRevision = 18
		p.Cells = []string{"0xabc", "ethereum", "0x" + strings.Repeat("f", 64), "2026-02-03", "tab\there"}
	case *actors.DeleteSheetRow:
		p.SpaceID = "sh3e4r5t6y7u8i9o0p"
		p.ExpectedRevision = 19
		p.Index = 4
	case *actors.CompactSheet:
		p.SpaceID = "sh3e4r5t6y7u8i9o0p"
		p.ExpectedRevision = 20
	case *actors.PutNote:
		p.TxID = strings.Repeat("ab", 32)
		p.Text = "rent — ünïcödé"
		p.Addresses = []string{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"}
		p.Eligible = true
	case *actors.DeleteNote:
		p.TxID = strings.Repeat("cd", 32)
	case *actors.SetLogin:
		p.Login = "Alice.Smith+watch@example.com"
		p.ExpectedPasswordHash = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo"
	case *actors.TouchKey:
		p.KeyID = "k3j5x7m2q4w6e8r0t2y"
	case *actors.TouchSession:
		p.SessionID = "s9d8f7g6h5j4k3l2m1n"
		p.ExpiresAt = at0 + int64(45*time.Minute)
	case *actors.RecordActivity:
		p.Entries = []actors.ActivityEntry{
			{KeyID: "k3j5x7m2q4w6e8r0t2y", Op: "GET /v1/portfolio/cards/{card_id}", Resource: actors.ResourceRef{Kind: actors.ResourcePortfolioCard, ID: "c1a2b3c4d5e6f7g8h9i"}, Status: 200, Count: 12, First: at0, Last: at0 + int64(900*time.Millisecond)},
			{KeyID: "k3j5x7m2q4w6e8r0t2y", Op: "PATCH /v1/bookmark-spaces/{space_id}/sheet", Resource: actors.ResourceRef{Kind: actors.ResourceSpace, ID: "sp7kq2m4x5n6p7q8r9s"}, Status: 409, Code: actors.CodeStaleVersion, Count: 1, First: at0 + 5, Last: at0 + 5},
		}
	case *actors.RecordKeyActivity:
		p.Entries = []actors.ActivityEntry{
			{KeyID: "k3j5x7m2q4w6e8r0t2y", Op: "POST /v1/portfolio/cards", Resource: actors.ResourceRef{Kind: actors.ResourcePortfolioCard, ID: "c1a2b3c4d5e6f7g8h9i"}, Status: 201, Count: 1, First: at0, Last: at0},
			{KeyID: "k3j5x7m2q4w6e8r0t2y", Op: actors.ActivityUnknown, Status: 404, Code: actors.CodeNotFound, Count: 4000, First: at0 + 3, Last: at0 + int64(990*time.Millisecond)},
			{KeyID: "k3j5x7m2q4w6e8r0t2y", Op: actors.ActivityOtherChanges, Count: 2, First: at0 + 7, Last: at0 + 9},
		}
	case *actors.ImportLabels:
		p.Lines = []actors.LabelChange{
			{CreateCard: &actors.CreatePortfolioCard{CardID: "c9z8y7x6w5v4u3t2s1r", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", CardFields: actors.CardFields{Name: strPtr("Savings — ünïcödé")}}},
			{RenameCard: &actors.UpdatePortfolioCard{CardID: "c1a2b3c4d5e6f7g8h9i", ExpectedVersion: "v44", CardFields: actors.CardFields{Name: strPtr("Cold")}}},
			{Note: &actors.PutNote{TxID: strings.Repeat("ef", 32), Text: "rent", Addresses: []string{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"}}},
		}
	case *actors.ObserveAddress:
		p.Address = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
		p.TipHeight, p.TipHash = 812, strings.Repeat("0a", 32)
		p.Confirmed = actors.AddressTotals{FundedSat: 150_000, SpentSat: 20_000, TxCount: 3}
		p.Mempool = actors.AddressTotals{FundedSat: 5_000, TxCount: 1}
		p.Txs = []actors.TxObservation{
			{TxID: strings.Repeat("1b", 32), State: actors.TxConfirmed, Height: 812, BlockHash: strings.Repeat("0a", 32), BlockTime: 1_790_000_000, ReceivedSat: 100_000},
			{TxID: strings.Repeat("2c", 32), State: actors.TxMempool, ReceivedSat: 5_000, Spends: []string{strings.Repeat("3d", 32) + ":1"}},
			{TxID: strings.Repeat("4e", 32), State: actors.TxReplaced, SentSat: 7_000, ReplacedBy: strings.Repeat("2c", 32)},
		}
	case *actors.ObserveChain:
		// Every field of both, so that neither the embedded observation's
		// fields nor TipOnly are dropped (apply refuses a tip-only one
		// with transactions; the encoding does not judge).
		p.ObserveAddress = *samplePayload(t, actors.KindObserveAddress).(*actors.ObserveAddress)
		p.TipOnly = true
	case *actors.CreateNotifyChannel:
		p.ChannelID, p.ChannelKind, p.Name = "nc_1", actors.ChannelWebhook, "hooks \u2603"
		p.Target, p.Display, p.Nonce, p.KeyFingerprint = "s1.c2VhbGVk", "https://example.com/…", "nonce-0123456789ab", "0123456789abcdef"
	case *actors.UpdateNotifyChannel:
		p.ChannelID, p.Name, p.Enabled = "nc_1", strPtr("renamed"), new(bool)
	case *actors.RotateNotifySecret:
		p.ChannelID, p.Nonce = "nc_1", "nonce-fedcba987654"
	case *actors.RotateNotifySecretWithGrace:
		p.ChannelID, p.Nonce, p.GraceSeconds = "nc_1", "nonce-fedcba987654", 3600
	case *actors.SetExplorer:
		p.Explorer = "mempool.space"
	case *actors.DeleteNotifyChannel:
		p.ChannelID = "nc_1"
	case *actors.PutNotifyRule:
		p.Scope, p.ID = actors.RuleCard, "card-1"
		p.Events, p.MinAmountSat, p.Depth, p.Channels = []actors.ChainEventKind{actors.ChainTxSeen, actors.ChainTxDeep}, 10_000, 3, []string{"nc_1"}
	case *actors.DeleteNotifyRule:
		p.Scope, p.ID = actors.RuleSpace, "space-1"
	case *actors.RecordDeliveries:
		p.Results = []actors.DeliveryResult{
			{EntryID: "nd_" + strings.Repeat("ab", 16), Attempt: 2, At: 1_790_000_000_000_000_000, Status: 503, LatencyMs: 120, Class: "answer", Detail: "the receiver answered 503", RetryAfterMs: 60_000},
			{EntryID: "nd_" + strings.Repeat("cd", 16), Attempt: 1, At: 1_790_000_000_000_000_001, Delivered: true, Status: 200, LatencyMs: 80},
		}
	case *actors.RedeliverEntry:
		p.EntryID = "nd_" + strings.Repeat("ab", 16)
	default:
		t.Fatalf("kind %d (%T) has no sample: add one", k, p)
	}
	return p
}

// samplePrincipals cycles through every shape a command's principal takes.
var samplePrincipals = []actors.Principal{
	{Kind: actors.PrincipalSystem},
	{Kind: actors.PrincipalOwner, SecretEpoch: 3},
	{Kind: actors.PrincipalOwner, SessionID: "s9d8f7g6h5j4k3l2m1n"},
	{Kind: actors.PrincipalAgent, KeyID: "k3j5x7m2q4w6e8r0t2y"},
}

// sampleCommands returns one command of every kind, with varied accounts,
// principals, times and idempotency requests.
func sampleCommands(t testing.TB) []*actors.Command {
	t.Helper()
	var cmds []*actors.Command
	for k := actors.Kind(1); k <= commandKindsMax; k++ {
		c := &actors.Command{
			Account:   fmt.Sprintf("acct-%d", k%3),
			At:        at0 + int64(k)*int64(time.Millisecond),
			Principal: samplePrincipals[int(k)%len(samplePrincipals)],
			Payload:   samplePayload(t, k),
		}
		if k%2 == 1 {
			c.Idempotency = &actors.IdempotencyRequest{
				Token:    fmt.Sprintf("retry-token-%04d-abcdef", k),
				Method:   "POST",
				Path:     "/v1/portfolio/cards",
				BodyHash: sha(fmt.Sprintf(`{"address":"%d"}`, k)),
			}
		}
		cmds = append(cmds, c)
	}
	return cmds
}

func mustEncode(t testing.TB, cmds []*actors.Command) []byte {
	t.Helper()
	b, err := EncodeCommands(cmds)
	if err != nil {
		t.Fatalf("EncodeCommands: %v", err)
	}
	return b
}

func TestNewPayloadKnowsExactlyTheTestedKinds(t *testing.T) {
	for k := 0; k <= 255; k++ {
		_, known := actors.NewPayload(actors.Kind(k))
		want := k >= 1 && k <= int(commandKindsMax)
		if known != want {
			t.Errorf("NewPayload(%d) known = %v, want %v (update commandKindsMax and samplePayload)", k, known, want)
		}
	}
}

func TestCommandsRoundTripEveryKind(t *testing.T) {
	for _, c := range sampleCommands(t) {
		t.Run(fmt.Sprintf("%T", c.Payload), func(t *testing.T) {
			got, err := DecodeCommands(mustEncode(t, []*actors.Command{c}))
			if err != nil {
				t.Fatalf("DecodeCommands: %v", err)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], c) {
				t.Fatalf("round trip changed the command:\n got %#v\nwant %#v", got, c)
			}
		})
	}
}

func TestCommandsRoundTripBatch(t *testing.T) {
	want := sampleCommands(t)
	got, err := DecodeCommands(mustEncode(t, want))
	if err != nil {
		t.Fatalf("DecodeCommands: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the batch:\n got %#v\nwant %#v", got, want)
	}
}

func TestCommandsRoundTripEmptyBatch(t *testing.T) {
	b := mustEncode(t, nil)
	if !bytes.Equal(b, []byte{entryFormatV1, 0}) {
		t.Fatalf("empty batch encodes as %x, want %x", b, []byte{entryFormatV1, 0})
	}
	got, err := DecodeCommands(b)
	if err != nil || len(got) != 0 {
		t.Fatalf("DecodeCommands(empty batch) = %v, %v; want no commands", got, err)
	}
}

// TestCommandsEncodingIsStable pins the bytes of one entry: the format is
// on disk and in every peer's log, so a change must be deliberate (a new
// format byte), never a side effect.
func TestCommandsEncodingIsStable(t *testing.T) {
	c := &actors.Command{
		Account:   "acct-1",
		At:        1,
		Principal: actors.Principal{Kind: actors.PrincipalOwner},
		Payload:   &actors.RevokeKey{KeyID: "k1"},
	}
	body := `{"a":"acct-1","t":1,"p":{"kind":2},"b":{"key_id":"k1"}}`
	want := append([]byte{entryFormatV1, 1, byte(actors.KindRevokeKey), byte(len(body))}, body...)
	if got := mustEncode(t, []*actors.Command{c}); !bytes.Equal(got, want) {
		t.Fatalf("encoding changed:\n got %q\nwant %q", got, want)
	}
}

// entry builds a raw log entry from a count and per-command (kind, body)
// pairs, so that tests can make entries EncodeCommands never would.
func entry(count uint64, kindBodies ...any) []byte {
	b := []byte{entryFormatV1}
	b = binary.AppendUvarint(b, count)
	for i := 0; i < len(kindBodies); i += 2 {
		body := []byte(kindBodies[i+1].(string))
		b = append(b, byte(kindBodies[i].(actors.Kind)))
		b = binary.AppendUvarint(b, uint64(len(body)))
		b = append(b, body...)
	}
	return b
}

func TestDecodeCommandsRejectsCorruptEntries(t *testing.T) {
	valid := mustEncode(t, sampleCommands(t)[:2])
	const revoke = `{"a":"acct-1","t":1,"p":{"kind":2},"b":{"key_id":"k1"}}`
	cases := []struct {
		name string
		data []byte
	}{
		{"nil input", nil},
		{"empty input", []byte{}},
		{"format byte zero", append([]byte{0}, valid[1:]...)},
		{"unknown format byte", append([]byte{2}, valid[1:]...)},
		{"format byte only", []byte{entryFormatV1}},
		{"unterminated count varint", []byte{entryFormatV1, 0x80}},
		{"count varint overflows 64 bits", append([]byte{entryFormatV1}, bytes.Repeat([]byte{0xff}, 11)...)},
		{"huge count", entry(entryCommandsMax+1, actors.KindRevokeKey, revoke)},
		{"max uint64 count", entry(^uint64(0), actors.KindRevokeKey, revoke)},
		{"count above the commands present", entry(2, actors.KindRevokeKey, revoke)},
		{"unknown kind zero", entry(1, actors.Kind(0), revoke)},
		{"unknown kind after the last", entry(1, commandKindsMax+1, revoke)},
		{"unknown kind 127", entry(1, actors.Kind(127), revoke)},
		{"a known kind marked ignorable", entry(1, actors.Kind(byte(actors.KindRevokeKey)|ignorableKind), revoke)},
		{"an ignorable kind not marked", entry(1, actors.KindRecordActivity, `{"a":"acct-1","t":1,"p":{"kind":1,"key_id":"k1"},"b":{"entries":[]}}`)},
		{"kind byte without a length", []byte{entryFormatV1, 1, byte(actors.KindRevokeKey)}},
		{"unterminated length varint", []byte{entryFormatV1, 1, byte(actors.KindRevokeKey), 0x80}},
		{"length beyond input", append([]byte{entryFormatV1, 1, byte(actors.KindRevokeKey), 0xff, 0x01}, revoke...)},
		{"length max uint64", append(binary.AppendUvarint([]byte{entryFormatV1, 1, byte(actors.KindRevokeKey)}, ^uint64(0)), revoke...)},
		{"truncated body", valid[:len(valid)-1]},
		{"truncated in the middle", valid[:len(valid)/2]},
		{"trailing byte", append(append([]byte{}, valid...), 0)},
		{"trailing command", append(entry(1, actors.KindRevokeKey, revoke), entry(1, actors.KindRevokeKey, revoke)[2:]...)},
		{"invalid JSON", entry(1, actors.KindRevokeKey, `{"a":"acct-1",`)},
		{"empty JSON body", entry(1, actors.KindRevokeKey, ``)},
		{"JSON array body", entry(1, actors.KindRevokeKey, `[]`)},
		{"trailing JSON in body", entry(1, actors.KindRevokeKey, revoke+`{}`)},
		{"missing payload", entry(1, actors.KindRevokeKey, `{"a":"acct-1","t":1,"p":{"kind":2}}`)},
		{"null payload", entry(1, actors.KindRevokeKey, `{"a":"acct-1","t":1,"p":{"kind":2},"b":null}`)},
		{"payload of the wrong type", entry(1, actors.KindRevokeKey, `{"a":"acct-1","t":1,"p":{"kind":2},"b":"k1"}`)},
		{"payload an array", entry(1, actors.KindRevokeKey, `{"a":"acct-1","t":1,"p":{"kind":2},"b":[]}`)},
		{"payload twice", entry(1, actors.KindRevokeKey, `{"a":"acct-1","t":1,"p":{"kind":2},"b":{"key_id":"k1"},"b":{"key_id":"k2"}}`)},
		{"field of the wrong type", entry(1, actors.KindRevokeKey, `{"a":"acct-1","t":"soon","p":{"kind":2},"b":{}}`)},
		{"bad hash in payload", entry(1, actors.KindRotateOwnerSecret, `{"a":"acct-1","t":1,"p":{"kind":2},"b":{"new_hash":"abc"}}`)},
		{"unknown plan in payload", entry(1, actors.KindSetPlan, `{"a":"acct-1","t":1,"p":{"kind":2},"b":{"plan":"gold"}}`)},
		{"unknown level in payload", entry(1, actors.KindSetGrant, `{"a":"acct-1","t":1,"p":{"kind":2},"b":{"resource":"space","id":"s","level":"admin"}}`)},
		{"second command corrupt", entry(2, actors.KindRevokeKey, revoke, actors.KindRevokeKey, `{`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmds, err := DecodeCommands(tc.data)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeCommands(%x) error = %v, want one wrapping ErrCorrupt", tc.data, err)
			}
			if cmds != nil {
				t.Fatalf("DecodeCommands returned %d commands with an error", len(cmds))
			}
		})
	}
}

// TestDecodeCommandsHugeCountAllocatesLittle checks the count bound: a
// corrupt count of a million must fail before the decoder allocates room
// for it.
func TestDecodeCommandsHugeCountAllocatesLittle(t *testing.T) {
	data := entry(1<<40, actors.KindRevokeKey, `{}`)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := DecodeCommands(data); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err = %v", err)
		}
	})
	if allocs > 5 {
		t.Fatalf("rejecting a huge count took %v allocations", allocs)
	}
}

// TestEncodeCommandsOutputAlwaysDecodes is the property the FSM relies on:
// an entry the proposer could write must decode on every replica, or the
// entry panics every node that applies it, and again on every restart.
func TestEncodeCommandsOutputAlwaysDecodes(t *testing.T) {
	cases := []actors.Payload{
		&actors.SetPlan{Plan: actors.Plan(9)},
		&actors.CreateAccount{Plan: actors.Plan(2), PasswordHash: "x", FirstSpaceID: "s"},
		&actors.SetGrant{Resource: actors.ResourceSpace, ID: "s", Level: actors.Level(7)},
		&actors.CreateKey{KeyID: "k", Capability: actors.Level(3)},
	}
	for _, p := range cases {
		c := &actors.Command{Account: "acct-1", At: at0, Principal: actors.Principal{Kind: actors.PrincipalOwner}, Payload: p}
		b, err := EncodeCommands([]*actors.Command{c})
		if err != nil {
			continue // refusing to encode is a correct answer
		}
		if _, err := DecodeCommands(b); err != nil {
			t.Errorf("%T %+v: encoded without error but does not decode: %v", p, p, err)
		}
	}
}

// FuzzDecodeCommands checks that no input panics the decoder and that
// whatever decodes is a fixed point: encoding it again and decoding that
// gives the same commands, so a replica that re-encodes (a forwarded
// batch, a backup) cannot drift from one that does not.
func FuzzDecodeCommands(f *testing.F) {
	all := sampleCommands(f)
	f.Add(mustEncode(f, all))
	f.Add(mustEncode(f, nil))
	for _, c := range all {
		f.Add(mustEncode(f, []*actors.Command{c}))
	}
	f.Add(entry(1, actors.KindRevokeKey, `{"a":"x","t":-1,"p":{"kind":255,"key_id":"k"},"i":null,"b":null}`))
	f.Add(entry(1, actors.KindSetPlan, `{"A":"x","T":1e3,"P":{},"B":{"PLAN":"base"}}`))
	f.Add([]byte{})
	f.Add([]byte{entryFormatV1, 0xff, 0xff, 0x03})
	f.Fuzz(func(t *testing.T, data []byte) {
		cmds, err := DecodeCommands(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		again, err := EncodeCommands(cmds)
		if err != nil {
			t.Fatalf("decoded commands do not encode: %v", err)
		}
		back, err := DecodeCommands(again)
		if err != nil {
			t.Fatalf("re-encoded commands do not decode: %v", err)
		}
		if !reflect.DeepEqual(back, cmds) {
			t.Fatalf("re-encoding changed the commands:\n got %#v\nwant %#v", back, cmds)
		}
		if third := mustEncode(t, back); !bytes.Equal(third, again) {
			t.Fatalf("encoding is not stable:\n%q\n%q", again, third)
		}
	})
}

// benchBatch is a full proposer batch (proposalBatchMax in package cluster)
// of card creations and updates across many accounts: the write path's
// common case.
func benchBatch(b *testing.B) []*actors.Command {
	cmds := make([]*actors.Command, 256)
	for i := range cmds {
		var p actors.Payload
		if i%2 == 0 {
			p = &actors.CreatePortfolioCard{CardID: fmt.Sprintf("card%016d", i), Address: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
				CardFields: actors.CardFields{Name: strPtr("Savings"), Note: strPtr("bought 2019"), ColorKey: strPtr("green")}}
		} else {
			p = &actors.UpdatePortfolioCard{CardID: fmt.Sprintf("card%016d", i-1), ExpectedVersion: "v12", CardFields: actors.CardFields{Name: strPtr("Renamed")}}
		}
		cmds[i] = &actors.Command{
			Account:   fmt.Sprintf("acct%06d", i%64),
			At:        at0 + int64(i),
			Principal: actors.Principal{Kind: actors.PrincipalAgent, KeyID: "k3j5x7m2q4w6e8r0t2y"},
			Idempotency: &actors.IdempotencyRequest{Token: fmt.Sprintf("token-%020d", i), Method: "POST", Path: "/v1/portfolio/cards",
				BodyHash: sha(fmt.Sprint(i))},
			Payload: p,
		}
	}
	return cmds
}

func BenchmarkEncodeCommands256(b *testing.B) {
	cmds := benchBatch(b)
	size := len(mustEncode(b, cmds))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeCommands(cmds); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeCommands256(b *testing.B) {
	data := mustEncode(b, benchBatch(b))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeCommands(data); err != nil {
			b.Fatal(err)
		}
	}
}

// twoPassRecord is how EncodeCommand wrote a record before it marshalled
// the payload in the same pass: the payload on its own, then the command
// around it as raw JSON. Log entries written that way are on disk.
func twoPassRecord(t *testing.T, c *actors.Command) []byte {
	t.Helper()
	payload, err := json.Marshal(c.Payload)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(wireCommand[json.RawMessage]{Account: c.Account, At: c.At, Principal: c.Principal, Idempotency: c.Idempotency, Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	kind := byte(c.Payload.Kind())
	if c.Payload.Kind().Ignorable() {
		kind |= ignorableKind
	}
	record := append([]byte{kind}, binary.AppendUvarint(nil, uint64(len(body)))...)
	return append(record, body...)
}

// A record of a kind this release does not know, marked ignorable (an
// advisory record of a newer release), is skipped and the rest of the
// entry decodes; unmarked, the whole entry is refused.
func TestDecodeCommandsSkipsUnknownIgnorableRecords(t *testing.T) {
	const revoke = `{"a":"acct-1","t":1,"p":{"kind":2},"b":{"key_id":"k1"}}`
	future := actors.Kind(100)
	cmds, err := DecodeCommands(entry(3, actors.KindRevokeKey, revoke, actors.Kind(byte(future)|ignorableKind), `{"anything":"a newer release wrote"}`, actors.KindRevokeKey, revoke))
	if err != nil || len(cmds) != 2 {
		t.Fatalf("decoded %d commands, error %v; want the two known ones", len(cmds), err)
	}
	if _, err := DecodeCommands(entry(2, actors.KindRevokeKey, revoke, future, `{}`)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("an unmarked unknown kind: %v", err)
	}
	for _, p := range []actors.Payload{&actors.RecordActivity{}, &actors.RecordKeyActivity{}} {
		if r, err := EncodeCommand(&actors.Command{Account: "a", At: 1, Principal: actors.Principal{Kind: actors.PrincipalAgent, KeyID: "k"}, Payload: p}); err != nil || r[0] != byte(p.Kind())|ignorableKind {
			t.Fatalf("%T's record starts %x, %v: want the ignorable bit", p, r[0], err)
		}
	}
}

// The one-pass encoder writes the bytes the two-pass one did, for every
// kind, so entries from either decode alike and an old node reads a new
// node's entries.
func TestEncodeCommandMatchesTwoPassEncoding(t *testing.T) {
	cmds := sampleCommands(t)
	cmds = append(cmds, &actors.Command{Account: "a<b>&c", At: 1, Principal: actors.Principal{Kind: actors.PrincipalAgent, KeyID: "k\u2028"},
		Payload: &actors.PutSheetRow{Cells: []string{"<script>", "a&b", "\u2029", "", "é"}}})
	for _, c := range cmds {
		got, err := EncodeCommand(c)
		if err != nil {
			t.Fatalf("%T: %v", c.Payload, err)
		}
		if want := twoPassRecord(t, c); !bytes.Equal(got, want) {
			t.Errorf("%T: one pass wrote\n%q\nthe two-pass encoding is\n%q", c.Payload, got, want)
		}
	}
}

func TestEncodeCommandRefusesAMissingPayload(t *testing.T) {
	if _, err := EncodeCommand(&actors.Command{Account: "a"}); err == nil {
		t.Fatal("a command without a payload was encoded")
	}
}
