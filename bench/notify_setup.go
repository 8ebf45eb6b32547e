package main

import (
	"fmt"
	"sync/atomic"
	"time"
)

// The channels of bench notify, made through the owner API as an owner
// makes them: a webhook to a path on the account's receiver, whose secret
// the answer shows once.

// hookPaths numbers the channels' paths, unique over the run.
var hookPaths atomic.Int64

// addHookChannels gives each account n webhook channels to a receiver
// of its own, setupParallelism accounts at a time; the last channel of
// the first account answers after slow, on a receiver of its own, when
// slow is positive. It returns each account's channels, in order.
func addHookChannels(c *client, public string, rc *receivers, accounts []*watchAccount, n int, slow time.Duration) ([][]*hookChannel, error) {
	out := make([][]*hookChannel, len(accounts))
	err := forEachBounded(len(accounts), setupParallelism, func(i int) error {
		base, err := rc.listen()
		if err != nil {
			return err
		}
		for k := range n {
			ch := &hookChannel{path: fmt.Sprintf("/h/%d", hookPaths.Add(1)), account: accounts[i]}
			at := base
			if i == 0 && k == n-1 && slow > 0 {
				ch.delay = slow
				if at, err = rc.listen(); err != nil {
					return err
				}
			}
			// Known before it exists: a test message could come at once.
			rc.add(ch)
			if ch.id, ch.secret, err = createWebhook(c, public, accounts[i], fmt.Sprintf("bench %d", k+1), at+ch.path); err != nil {
				return err
			}
			out[i] = append(out[i], ch)
		}
		return nil
	})
	return out, err
}

// createWebhook makes a webhook channel and returns its ID and secret.
func createWebhook(c *client, public string, a *watchAccount, name, url string) (id, secret string, err error) {
	var made struct {
		Channel struct {
			ID string `json:"id"`
		} `json:"channel"`
		Secret string `json:"secret"`
	}
	body := map[string]string{"kind": "webhook", "name": name, "url": url}
	if err := c.call("POST", public+"/owner/v1/notifications/channels", a.ownerSecret, body, 201, &made); err != nil {
		return "", "", fmt.Errorf("create a webhook channel: %w", err)
	}
	if made.Channel.ID == "" || made.Secret == "" {
		return "", "", fmt.Errorf("a webhook channel was made without an ID or a secret")
	}
	return made.Channel.ID, made.Secret, nil
}

// setDefaultRule sets the account's default rule to tell only events of
// the kinds given, to every channel.
func setDefaultRule(c *client, public string, a *watchAccount, events ...string) error {
	body := map[string]any{"events": events}
	if err := c.call("PUT", public+"/owner/v1/notifications/rules/default", a.ownerSecret, body, 200, nil); err != nil {
		return fmt.Errorf("set the default rule: %w", err)
	}
	return nil
}
