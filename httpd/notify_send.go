package httpd

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// What the owner API asks of this node's deliverer (notify/deliver): a
// "send a test" now, and a wake after a change that may have made
// notifications due.

var notificationSendOperations = []operation{
	{id: "testNotificationChannel", method: fasthttp.MethodPost, path: notificationsPrefix + "/channels/{channel_id}/test", apis: ownerAPI,
		response: typeOf[channelTestView](), status: fasthttp.StatusOK, serve: (*Server).testNotifyChannel},
}

// channelTestView is what a test message gave.
type channelTestView struct {
	Delivered bool   `json:"delivered"`
	Status    int    `json:"status"`
	LatencyMs int64  `json:"latency_ms"`
	Class     string `json:"class"`
	Detail    string `json:"detail"`
}

// errNoRelay refuses an email channel on a server that cannot send email.
var errNoRelay = actors.Errorf(actors.CodeValidation, "this server sends no email: its operator has not set an SMTP relay (--smtp-relay)")

// channelTestTimeout bounds a test's send: within the request's own
// bound, so the owner hears how it went rather than a timeout.
const channelTestTimeout = requestTimeout - 3*time.Second

// testNotifyChannel sends the channel a sample event now, from this
// node (the leader: a follower forwards owner requests), through the
// same senders and budgets as the outbox's tries but outside it: no
// entry, no line in the delivery log, no effect on the channel's health.
// A disabled channel may be tested, to see that it works before it is
// enabled again.
func (s *Server) testNotifyChannel(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	c, cancel := s.context()
	defer cancel()
	v, err := s.testChannelAs(c, r, pathParam(r.ctx, "channel_id"))
	if err != nil {
		return err
	}
	return answer(r.ctx, fasthttp.StatusOK, v)
}

// testChannelAs sends the channel id of r's owner a sample event now (the
// owner API's test and the site's).
func (s *Server) testChannelAs(c context.Context, r *request, id string) (channelTestView, error) {
	if s.notifyTester == nil {
		return channelTestView{}, errNotifyUnset
	}
	ch, err := ask(c, s, r, actors.NotifyChannelQuery{ChannelID: id}, ReadLeader)
	if err != nil {
		return channelTestView{}, err
	}
	sendCtx, cancelSend := context.WithTimeout(c, channelTestTimeout)
	defer cancelSend()
	out := s.notifyTester.Test(sendCtx, r.cred.AccountID, ch, s.now())
	return channelTestView{Delivered: out.Delivered, Status: out.Status,
		LatencyMs: out.Latency.Milliseconds(), Class: out.Class, Detail: out.Detail}, nil
}

// wakeDeliverer is a write's decoration that wakes this node's deliverer
// for r's account once the write applied.
func (s *Server) wakeDeliverer(r *request) func(actors.Result) actors.Result {
	return func(res actors.Result) actors.Result {
		if s.notifyWake != nil {
			s.notifyWake(r.cred.AccountID)
		}
		return res
	}
}
