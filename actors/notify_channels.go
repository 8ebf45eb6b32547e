package actors

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Notification channels: where the owner is told. A webhook's and an ntfy
// topic's URL may hold a token (a Slack webhook, an ntfy topic that is
// its own password), so the state holds it only sealed under the node's
// notify key (notify/keys.Seal, at the edge), with a redacted form to
// show; a webhook's signing secret is derived from the key and the
// channel's nonce and never stored at all.

// ChannelKind is how a channel is told.
type ChannelKind string

const (
	ChannelWebhook ChannelKind = "webhook"
	ChannelNtfy    ChannelKind = "ntfy"
	ChannelEmail   ChannelKind = "email"
)

// ParseChannelKind reads a channel kind from the API.
func ParseChannelKind(s string) (ChannelKind, bool) {
	switch k := ChannelKind(s); k {
	case ChannelWebhook, ChannelNtfy, ChannelEmail:
		return k, true
	}
	return "", false
}

// sealed reports whether the kind's target is a URL, held sealed.
func (k ChannelKind) sealed() bool { return k == ChannelWebhook || k == ChannelNtfy }

// Why a channel is disabled.
const (
	DisabledByOwner = "owner"
	// DisabledFailing: every try failed for a day (channelFailingMax)
	// with no success; the site shows a notice until the owner enables
	// the channel again.
	DisabledFailing = "failing"
)

// Bounds of a channel's fields.
const (
	notifyChannelNameCharsMax = keyNameCharsMax
	notifyChannelIDBytesMax   = 64
	// notifyTargetBytesMax: a sealed URL of at most 2,048 bytes is about
	// 2,800 in base64 with its nonce and tag.
	notifyTargetBytesMax  = 4096
	notifyDisplayBytesMax = 2200
	// EmailAddressBytesMax is RFC 5321's limit on a path.
	EmailAddressBytesMax = 254
	notifyNonceBytesMax  = 64
	notifyNonceBytesMin  = 16
)

// NotifyChannel is one channel as the state holds it.
type NotifyChannel struct {
	ID   string      `json:"id"`
	Kind ChannelKind `json:"kind"`
	Name string      `json:"name"`
	// Target is, for a webhook or ntfy, the URL sealed under the notify
	// key for this channel (never the plain URL: it may hold a token);
	// for email, the address.
	Target string `json:"target"`
	// Display is what the owner is shown: the URL as scheme://host/…,
	// or the address.
	Display string `json:"display"`
	// Nonce makes a webhook's signing secret with the notify key; a
	// rotation sets a new one, and the old secret stops.
	Nonce string `json:"nonce,omitempty"`
	// PreviousNonce is the nonce a rotation with a grace replaced: its
	// secret signs beside the new one until PreviousUntil, so a receiver
	// can be given the new secret without refusing a try meanwhile.
	PreviousNonce string `json:"previous_nonce,omitempty"`
	PreviousUntil int64  `json:"previous_until,omitempty"`
	// KeyFingerprint names the notify key Target was sealed and the
	// secret derived under: a node with another key refuses the channel.
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
	CreatedAt      int64  `json:"created_at"`
	Enabled        bool   `json:"enabled"`
	DisabledAt     int64  `json:"disabled_at,omitempty"`
	DisabledReason string `json:"disabled_reason,omitempty"`
	// FailingSince is the first failed try since the last success (0:
	// not failing).
	FailingSince  int64 `json:"failing_since,omitempty"`
	LastSuccessAt int64 `json:"last_success_at,omitempty"`
}

// CreateNotifyChannel makes a channel. The edge draws the ID and the
// nonce, checks and seals the URL, and derives the secret it shows once.
type CreateNotifyChannel struct {
	ChannelID      string      `json:"channel_id"`
	ChannelKind    ChannelKind `json:"kind"`
	Name           string      `json:"name"`
	Target         string      `json:"target"`
	Display        string      `json:"display"`
	Nonce          string      `json:"nonce,omitempty"`
	KeyFingerprint string      `json:"key_fingerprint,omitempty"`
}

func (*CreateNotifyChannel) Kind() Kind { return KindCreateNotifyChannel }

func (p *CreateNotifyChannel) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwnerOnly(c); err != nil {
		return fail(err)
	}
	if err := p.validate(); err != nil {
		return fail(err)
	}
	if a.notifyChannel(p.ChannelID) != nil {
		return fail(Errorf(CodeConflict, "channel id is taken"))
	}
	if a.Notify != nil && len(a.Notify.Channels) >= notifyChannelsMax {
		return fail(Errorf(CodeConflict, "an account may have at most %d notification channels; delete one first", notifyChannelsMax))
	}
	ch := &NotifyChannel{ID: p.ChannelID, Kind: p.ChannelKind, Name: p.Name, Target: p.Target, Display: p.Display,
		Nonce: p.Nonce, KeyFingerprint: p.KeyFingerprint, CreatedAt: c.At, Enabled: true}
	n := a.notify()
	n.Channels = append(n.Channels, ch)
	a.nextVersion()
	return created(ChannelCreatedView{Channel: ch.view(c.At)})
}

func (p *CreateNotifyChannel) validate() *Error {
	if !ValidChannelID(p.ChannelID) {
		return Errorf(CodeValidation, "channel id must be nc_ and up to %d letters, digits, - or _", notifyChannelIDBytesMax)
	}
	if _, known := ParseChannelKind(string(p.ChannelKind)); !known {
		return Errorf(CodeValidation, "kind must be webhook, ntfy or email")
	}
	if err := ValidateChannelName(p.Name); err != nil {
		return err
	}
	if p.ChannelKind.sealed() {
		switch {
		case !strings.HasPrefix(p.Target, "s1.") || len(p.Target) > notifyTargetBytesMax:
			// The plain URL must never reach the log: only a sealed one
			// may stand here.
			return Errorf(CodeValidation, "a %s channel's target must be a sealed URL", p.ChannelKind)
		case p.Display == "" || len(p.Display) > notifyDisplayBytesMax || !utf8.ValidString(p.Display) || !isPrintable(p.Display):
			return Errorf(CodeValidation, "the display form of the URL must be 1 to %d printable bytes", notifyDisplayBytesMax)
		case !isHexFingerprint(p.KeyFingerprint):
			return Errorf(CodeValidation, "the notify key's fingerprint must be 16 hex digits")
		}
	} else {
		if err := ValidateEmailAddress(p.Target); err != nil {
			return err
		}
		if p.Display != p.Target || p.Nonce != "" {
			return Errorf(CodeValidation, "an email channel shows its address and has no nonce")
		}
	}
	if p.ChannelKind == ChannelWebhook {
		if err := validateNonce(p.Nonce); err != nil {
			return err
		}
	} else if p.Nonce != "" {
		return Errorf(CodeValidation, "only a webhook has a nonce")
	}
	return nil
}

// ValidChannelID reports whether id is a channel ID: "nc_" and letters,
// digits, - or _, at most notifyChannelIDBytesMax bytes in all.
func ValidChannelID(id string) bool {
	return strings.HasPrefix(id, "nc_") && len(id) > 3 && len(id) <= notifyChannelIDBytesMax && isIDChars(id)
}

// isIDChars reports whether s holds only ASCII letters, digits, - and _.
func isIDChars(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}

func validateNonce(nonce string) *Error {
	if len(nonce) < notifyNonceBytesMin || len(nonce) > notifyNonceBytesMax || !isIDChars(nonce) {
		return Errorf(CodeValidation, "a webhook's nonce must be %d to %d letters, digits, - or _", notifyNonceBytesMin, notifyNonceBytesMax)
	}
	return nil
}

func isHexFingerprint(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// ValidateChannelName checks a channel's name: the rule of key names,
// and not empty (a list of channels needs something to call each).
func ValidateChannelName(name string) *Error {
	if name == "" || !utf8.ValidString(name) || charCount(name) > notifyChannelNameCharsMax || !isPrintable(name) {
		return Errorf(CodeValidation, "name must be 1 to %d printable characters", notifyChannelNameCharsMax)
	}
	return nil
}

// ValidateEmailAddress is apply's check of an address the edge parsed
// with net/mail already: one bare address, printable, without spaces.
func ValidateEmailAddress(address string) *Error {
	at := strings.LastIndexByte(address, '@')
	if len(address) > EmailAddressBytesMax || at <= 0 || at == len(address)-1 || !utf8.ValidString(address) ||
		!isPrintable(address) || strings.ContainsAny(address, " <>,;\"") {
		return Errorf(CodeValidation, "address must be one email address of at most %d bytes", EmailAddressBytesMax)
	}
	return nil
}

// UpdateNotifyChannel renames a channel or turns it off or on. Turning
// it on clears its failing state: the owner says the receiver is back.
type UpdateNotifyChannel struct {
	ChannelID string  `json:"channel_id"`
	Name      *string `json:"name,omitempty"`
	Enabled   *bool   `json:"enabled,omitempty"`
}

func (*UpdateNotifyChannel) Kind() Kind { return KindUpdateNotifyChannel }

func (p *UpdateNotifyChannel) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwnerOnly(c); err != nil {
		return fail(err)
	}
	if p.Name == nil && p.Enabled == nil {
		return fail(Errorf(CodeValidation, "nothing to change: give name or enabled"))
	}
	if p.Name != nil {
		if err := ValidateChannelName(*p.Name); err != nil {
			return fail(err)
		}
	}
	ch := a.notifyChannel(p.ChannelID)
	if ch == nil {
		return fail(errChannelNotFound)
	}
	if p.Name != nil {
		ch.Name = *p.Name
	}
	if p.Enabled != nil {
		switch {
		case *p.Enabled && !ch.Enabled:
			ch.Enabled, ch.DisabledAt, ch.DisabledReason, ch.FailingSince = true, 0, "", 0
		case !*p.Enabled && ch.Enabled:
			ch.Enabled, ch.DisabledAt, ch.DisabledReason = false, c.At, DisabledByOwner
		}
	}
	a.nextVersion()
	return ok(ch.view(c.At))
}

var errChannelNotFound = Errorf(CodeNotFound, "no such notification channel")

// RotateNotifySecret gives a webhook channel a new nonce, hence a new
// secret (shown once, by the edge); the old secret signs nothing more.
type RotateNotifySecret struct {
	ChannelID string `json:"channel_id"`
	Nonce     string `json:"nonce"`
}

func (*RotateNotifySecret) Kind() Kind { return KindRotateNotifySecret }

func (p *RotateNotifySecret) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwnerOnly(c); err != nil {
		return fail(err)
	}
	if err := validateNonce(p.Nonce); err != nil {
		return fail(err)
	}
	ch := a.notifyChannel(p.ChannelID)
	if ch == nil {
		return fail(errChannelNotFound)
	}
	if ch.Kind != ChannelWebhook {
		return fail(Errorf(CodeValidation, "only a webhook channel has a secret"))
	}
	if ch.Nonce == p.Nonce {
		return fail(Errorf(CodeConflict, "the new nonce must differ from the old"))
	}
	ch.Nonce, ch.PreviousNonce, ch.PreviousUntil = p.Nonce, "", 0
	a.nextVersion()
	return ok(ch.view(c.At))
}

// NotifySecretGraceMax is the longest an old secret may keep signing
// after a rotation: a day, as long as a notification is tried.
const NotifySecretGraceMax = 24 * time.Hour

// RotateNotifySecretWithGrace gives a webhook channel a new nonce while
// the old secret keeps signing beside it for GraceSeconds (1 s to a day):
// each try carries a signature under each, and either verifies. Only the
// secret just replaced is kept: a second rotation within the grace ends
// the first one's.
type RotateNotifySecretWithGrace struct {
	ChannelID    string `json:"channel_id"`
	Nonce        string `json:"nonce"`
	GraceSeconds int64  `json:"grace_seconds"`
}

func (*RotateNotifySecretWithGrace) Kind() Kind { return KindRotateNotifySecretWithGrace }

func (p *RotateNotifySecretWithGrace) apply(a *Account, c *Command, level Level) Result {
	if p.GraceSeconds < 1 || p.GraceSeconds > int64(NotifySecretGraceMax/time.Second) {
		return fail(Errorf(CodeValidation, "grace_seconds must be from 1 to %d (a day)", int64(NotifySecretGraceMax/time.Second)))
	}
	ch := a.notifyChannel(p.ChannelID)
	var previous string
	if ch != nil {
		previous = ch.Nonce
	}
	res := (&RotateNotifySecret{ChannelID: p.ChannelID, Nonce: p.Nonce}).apply(a, c, level)
	if res.err != nil {
		return res
	}
	ch.PreviousNonce, ch.PreviousUntil = previous, c.At+p.GraceSeconds*int64(time.Second)
	return ok(ch.view(c.At))
}

// DeleteNotifyChannel deletes a channel and every entry of its outbox:
// nothing is sent to it any more. Rules naming it keep the name, which
// selects nothing (a rule whose channels are all gone must not fall back
// to every channel); the delivery log keeps its lines.
type DeleteNotifyChannel struct {
	ChannelID string `json:"channel_id"`
}

func (*DeleteNotifyChannel) Kind() Kind { return KindDeleteNotifyChannel }

func (p *DeleteNotifyChannel) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwnerOnly(c); err != nil {
		return fail(err)
	}
	if a.notifyChannel(p.ChannelID) == nil {
		return fail(errChannelNotFound)
	}
	n := a.Notify
	n.Channels = slices.DeleteFunc(n.Channels, func(ch *NotifyChannel) bool { return ch.ID == p.ChannelID })
	n.Outbox = slices.DeleteFunc(n.Outbox, func(e *OutboxEntry) bool { return e.ChannelID == p.ChannelID })
	a.nextVersion()
	return noContent()
}

// ChannelView is a channel as the owner sees it: never its target's
// sealed form, its nonce or its secret.
type ChannelView struct {
	ID             string      `json:"id"`
	Kind           ChannelKind `json:"kind"`
	Name           string      `json:"name"`
	Display        string      `json:"display"`
	Enabled        bool        `json:"enabled"`
	CreatedAt      string      `json:"created_at"`
	DisabledAt     *string     `json:"disabled_at"`
	DisabledReason string      `json:"disabled_reason,omitempty"`
	FailingSince   *string     `json:"failing_since"`
	LastSuccessAt  *string     `json:"last_success_at"`
	// PreviousSecretUntil is when the secret before the last rotation
	// stops signing (a rotation with a grace); null when it has stopped
	// or there was none.
	PreviousSecretUntil *string `json:"previous_secret_until"`
}

// ChannelCreatedView is the body of a channel's creation; the edge adds
// a webhook's secret.
type ChannelCreatedView struct {
	Channel ChannelView `json:"channel"`
	Secret  string      `json:"secret,omitempty"`
}

// view is the channel as the owner sees it at now.
func (ch *NotifyChannel) view(now int64) ChannelView {
	v := ChannelView{ID: ch.ID, Kind: ch.Kind, Name: ch.Name, Display: ch.Display, Enabled: ch.Enabled,
		CreatedAt: formatTime(ch.CreatedAt), DisabledAt: optionalTime(ch.DisabledAt), DisabledReason: ch.DisabledReason,
		FailingSince: optionalTime(ch.FailingSince), LastSuccessAt: optionalTime(ch.LastSuccessAt)}
	if ch.previousSigns(now) {
		v.PreviousSecretUntil = optionalTime(ch.PreviousUntil)
	}
	return v
}

// NotifyChannelsQuery is the owner's list of channels, in the order they
// were made.
type NotifyChannelsQuery struct{}

// NotifyChannelsView is the body of GET /owner/v1/notifications/channels.
type NotifyChannelsView struct {
	Channels []ChannelView `json:"channels"`
}

func (NotifyChannelsQuery) answer(a *Account, who Principal, _ Level, now int64) (NotifyChannelsView, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return NotifyChannelsView{}, err
	}
	v := NotifyChannelsView{Channels: []ChannelView{}}
	if a.Notify != nil {
		for _, ch := range a.Notify.Channels {
			v.Channels = append(v.Channels, ch.view(now))
		}
	}
	return v, nil
}

// NotifyChannelQuery is one channel as its sender needs it: the edge's
// "send a test" and the rotation's secret read it. Owner and system only.
type NotifyChannelQuery struct{ ChannelID string }

// NotifyChannelTarget is what a sender needs of a channel.
type NotifyChannelTarget struct {
	ID     string
	Kind   ChannelKind
	Name   string
	Target string
	Nonce  string
	// PreviousNonce is the nonce of the secret a rotation's grace still
	// signs with at the query's time ("" when none).
	PreviousNonce  string
	KeyFingerprint string
	Enabled        bool
}

func (q NotifyChannelQuery) answer(a *Account, who Principal, _ Level, now int64) (NotifyChannelTarget, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return NotifyChannelTarget{}, err
	}
	ch := a.notifyChannel(q.ChannelID)
	if ch == nil {
		return NotifyChannelTarget{}, errChannelNotFound
	}
	return ch.target(now), nil
}

// target is the channel as a sender needs it at now.
func (ch *NotifyChannel) target(now int64) NotifyChannelTarget {
	t := NotifyChannelTarget{ID: ch.ID, Kind: ch.Kind, Name: ch.Name, Target: ch.Target, Nonce: ch.Nonce,
		KeyFingerprint: ch.KeyFingerprint, Enabled: ch.Enabled}
	if ch.previousSigns(now) {
		t.PreviousNonce = ch.PreviousNonce
	}
	return t
}

// previousSigns reports whether the secret before the last rotation still
// signs at now.
func (ch *NotifyChannel) previousSigns(now int64) bool {
	return ch.PreviousNonce != "" && now < ch.PreviousUntil
}
