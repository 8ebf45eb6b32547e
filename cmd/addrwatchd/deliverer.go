package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/notify/deliver"
	"github.com/addrwatch/addrwatch/notify/egress"
	"github.com/addrwatch/addrwatch/notify/keys"
	"github.com/addrwatch/addrwatch/notify/send"
)

// deliverStore is the deliverer's view of this node's accounts, as the
// follower's is: the ones it leads, read and written with the system's
// credential and the leader's clock.
type deliverStore struct {
	accounts   accountStore
	ids        func() []string
	leadership func() (groups, gained uint64)
	serves     func(account string) bool
	now        func() time.Time
}

func (s deliverStore) Leadership() (uint64, uint64) { return s.leadership() }
func (s deliverStore) Accounts() []string           { return s.ids() }
func (s deliverStore) Serves(account string) bool   { return s.serves(account) }

func (s deliverStore) Due(ctx context.Context, account string, now time.Time) (actors.DueDeliveries, error) {
	cred := actors.Credential{Kind: actors.CredentialSystem, AccountID: account, Now: now.UnixNano()}
	return actors.Answer[actors.DueDeliveries](s.accounts.Query(ctx, cred, actors.DueDeliveriesQuery{Now: now.UnixNano()}))
}

// Record proposes the tries, at the leader's time; each result carries
// its own (the leader's clock at the try's start),
// which is what apply reads.
func (s deliverStore) Record(ctx context.Context, account string, results []actors.DeliveryResult) error {
	cmd := &actors.Command{Account: account, At: s.now().UnixNano(), Principal: actors.Principal{Kind: actors.PrincipalSystem},
		Payload: &actors.RecordDeliveries{Results: results}}
	_, err := s.accounts.Propose(ctx, cmd)
	return err
}

// leadsOne is the Leadership of an unsharded node: bit 0 while it serves.
func leadsOne(n *cluster.Node) func() (uint64, uint64) {
	return func() (uint64, uint64) {
		if n.Serving() {
			return 1, n.LeadershipsGained()
		}
		return 0, n.LeadershipsGained()
	}
}

// groupsLed is the Leadership of a sharded node: bit i while it serves
// group i (cluster.MaxGroups is 64).
func groupsLed(g *cluster.Groups) func() (uint64, uint64) {
	return func() (uint64, uint64) {
		var led, gained uint64
		for i := range g.Count() {
			n := g.Group(i)
			gained += n.LeadershipsGained()
			if n.Serving() {
				led |= 1 << i
			}
		}
		return led, gained
	}
}

// smtpRelay is the operator's relay (--smtp-*), or nil without
// --smtp-relay. The password comes from a file that only its owner may
// read, never from the command line, where every user of the machine sees
// it.
func smtpRelay(cfg config) (*send.SMTPRelay, error) {
	if cfg.SMTPRelay == "" {
		return nil, nil
	}
	relay := &send.SMTPRelay{Addr: cfg.SMTPRelay, From: cfg.SMTPFrom, Username: cfg.SMTPUser, AllowPlaintext: cfg.SMTPPlaintext,
		TLS: &tls.Config{MinVersion: tls.VersionTLS12}}
	if cfg.SMTPPasswordFile != "" {
		info, err := os.Stat(cfg.SMTPPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("--smtp-password-file: %w", err)
		}
		if info.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("--smtp-password-file %s is readable by others (mode %o): chmod 600 it", cfg.SMTPPasswordFile, info.Mode().Perm())
		}
		b, err := os.ReadFile(cfg.SMTPPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("--smtp-password-file: %w", err)
		}
		relay.Password = strings.TrimRight(string(b), "\r\n")
		if relay.Password == "" {
			return nil, fmt.Errorf("--smtp-password-file %s is empty", cfg.SMTPPasswordFile)
		}
	}
	return relay, nil
}

// notifyChannels are the senders of every kind of channel: through
// client for webhooks and ntfy, through relay (when set) for email, whose
// messages count against budgets of the same sizes as client's.
func notifyChannels(key *keys.Key, client *egress.Client, relay *send.SMTPRelay) *deliver.Channels {
	c := &deliver.Channels{Webhook: &send.Webhook{HTTP: client, Key: key}, Ntfy: &send.Ntfy{HTTP: client, Key: key}}
	if relay != nil {
		c.Email = &send.Email{Relay: *relay, Limits: egress.NewLimits(egress.AccountRateDefault, egress.EndpointRateDefault, nil)}
	}
	return c
}
