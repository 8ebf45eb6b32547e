package persistence

import (
	"testing"

	"github.com/addrwatch/addrwatch/actors"
)

// The log outlives the code that wrote it: an entry must apply the same way
// whichever build replays it. The entries below are byte for byte what the
// builds before the owner-credential changes wrote (printed by that code's
// EncodeCommands), and this build applies them.
const (
	// CreateAccount of acct-r: password hash "pw-old", owner secret hash
	// sha256("aws.acct-r.secret").
	oldCreateAccountEntry = "\x01\x01\x01\xbf\x01{\"a\":\"acct-r\",\"t\":1,\"p\":{\"kind\":3},\"b\":{\"plan\":\"base\",\"owner_secret_hash\":\"a2f11ac041cbc373ad06fd0f1b817c2c57001414523ff89027dd4e6d15818f7e\",\"password_hash\":\"pw-old\",\"first_space_id\":\"sp-r\"}}"
	// ChangePassword by the owner secret from "pw-old" to "pw-new".
	oldChangePasswordEntry = "\x01\x01\th{\"a\":\"acct-r\",\"t\":2,\"p\":{\"kind\":2},\"b\":{\"expected_password_hash\":\"pw-old\",\"new_password_hash\":\"pw-new\"}}"
	// RotateOwnerSecret to sha256("aws.acct-r.rotated"), with no password.
	oldRotateOwnerSecretEntry = "\x01\x01\nw{\"a\":\"acct-r\",\"t\":2,\"p\":{\"kind\":2},\"b\":{\"new_hash\":\"098883ebd433ddedc6f532c6056c2a6c07bcb9cf658dda2245f4faaff9011aa4\"}}"
)

// replay decodes and applies raw entries in order and returns the account
// and the last command's result.
func replay(t *testing.T, entries ...string) (*actors.Account, actors.Result) {
	t.Helper()
	var (
		a   *actors.Account
		res actors.Result
	)
	for _, e := range entries {
		cmds, err := DecodeCommands([]byte(e))
		if err != nil {
			t.Fatalf("DecodeCommands(%q): %v", e, err)
		}
		for _, c := range cmds {
			a, res = actors.Apply(a, c)
		}
	}
	return a, res
}

func TestOldChangePasswordEntryKeepsTheOwnerSecret(t *testing.T) {
	a, res := replay(t, oldCreateAccountEntry, oldChangePasswordEntry)
	if _, err := res.Outcome(); err != nil || res.Status != 204 {
		t.Fatalf("old ChangePassword entry: status %d, err %v; want 204 as when it was written", res.Status, err)
	}
	if a.PasswordHash != "pw-new" {
		t.Fatalf("password hash %q, want pw-new", a.PasswordHash)
	}
	if a.OwnerSecretHash != sha("aws.acct-r.secret") || a.OwnerSecretEpoch != 0 {
		t.Fatalf("an old password change replaced the owner secret (epoch %d)", a.OwnerSecretEpoch)
	}
	if _, _, err := a.Authenticate(actors.Credential{Kind: actors.CredentialOwnerSecret, AccountID: "acct-r", Hash: sha("aws.acct-r.secret")}); err != nil {
		t.Fatalf("the owner secret stopped working after replaying an old password change: %v", err)
	}
}

func TestOldRotateOwnerSecretEntryNeedsNoPassword(t *testing.T) {
	a, res := replay(t, oldCreateAccountEntry, oldRotateOwnerSecretEntry)
	if _, err := res.Outcome(); err != nil || res.Status != 200 {
		t.Fatalf("old RotateOwnerSecret entry: status %d, err %v", res.Status, err)
	}
	if a.OwnerSecretHash != sha("aws.acct-r.rotated") || a.OwnerSecretEpoch != 1 {
		t.Fatalf("old rotation did not rotate (epoch %d)", a.OwnerSecretEpoch)
	}
}
