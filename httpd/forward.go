package httpd

import (
	"crypto/subtle"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Cluster is what forwarding needs from the node.
type Cluster interface {
	// Serving reports whether this node answers requests itself.
	Serving() bool
	// Leader returns the leader's public and admin listeners, or false
	// while none is known.
	Leader() (public, admin string, known bool)
	// ForwardSecret authenticates requests forwarded between nodes.
	ForwardSecret() string
}

// Forwarding: a follower serves every request by passing it to the leader
// over a pooled connection and relaying the answer, so a client never needs
// to know which node leads. During an election a request waits a bounded
// time for a leader; with none it fails with a clear 503.
const (
	forwardedHeader = "X-Addrwatch-Forwarded"
	leaderWaitMax   = 5 * time.Second
	leaderPoll      = 10 * time.Millisecond
	forwardTimeout  = 30 * time.Second
	forwardConnsMax = 512
)

// forwardedKey marks, on the leader, a request a follower forwarded: its
// client was already rate limited there.
const forwardedKey = "addrwatch.forwarded"

type forwarder struct {
	cluster Cluster
	mu      sync.Mutex
	clients map[string]*fasthttp.HostClient
}

func (f *forwarder) client(addr string) *fasthttp.HostClient {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.clients[addr]
	if c == nil {
		// One attempt only: fasthttp would otherwise resend a GET or PUT
		// whose connection broke, and a PUT the leader had already
		// applied would run twice. Retrying is decided in send(), where
		// only a failed dial (nothing sent) is retried.
		c = &fasthttp.HostClient{Addr: addr, MaxConns: forwardConnsMax, ReadTimeout: forwardTimeout, WriteTimeout: forwardTimeout,
			NoDefaultUserAgentHeader: true, DisablePathNormalizing: true, MaxIdemponentCallAttempts: 1,
			RetryIfErr: func(*fasthttp.Request, int, error) (bool, bool) { return false, false }}
		f.clients[addr] = c
	}
	return c
}

// receive recognises a request forwarded by another node (and drops a
// forged forwarding header).
func (f *forwarder) receive(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if given := ctx.Request.Header.Peek(forwardedHeader); given != nil {
			secret := f.cluster.ForwardSecret()
			if secret != "" && subtle.ConstantTimeCompare(given, []byte(secret)) == 1 {
				ctx.SetUserValue(forwardedKey, true)
			}
			ctx.Request.Header.Del(forwardedHeader)
		}
		next(ctx)
	}
}

// send passes a request this node cannot serve to the leader. admin picks
// the leader's admin listener. local lists paths always served here.
func (f *forwarder) send(admin bool, local func(path []byte) bool, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if f.cluster.Serving() || local(ctx.Path()) || ctx.UserValue(forwardedKey) != nil {
			next(ctx)
			return
		}
		deadline := time.Now().Add(leaderWaitMax)
		for {
			if f.cluster.Serving() {
				next(ctx)
				return
			}
			if public, adminAddr, known := f.cluster.Leader(); known {
				addr := public
				if admin {
					addr = adminAddr
				}
				// A leader that cannot be dialled is usually one that just
				// died: nothing was sent, so wait for the next one.
				if sent := f.forward(ctx, addr, time.Now().Before(deadline)); sent {
					return
				}
			}
			if time.Now().After(deadline) {
				writeError(ctx, actors.Errorf(actors.CodeHTTPError, "no leader is available; the cluster may be electing one or may have lost its majority; retry shortly"))
				return
			}
			time.Sleep(leaderPoll)
		}
	}
}

// forward relays the request to addr. It reports false, having written
// nothing, when the leader could not be dialled and retry is allowed.
func (f *forwarder) forward(ctx *fasthttp.RequestCtx, addr string, retry bool) bool {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	copyRequest(req, ctx)
	req.SetHost(addr)
	req.Header.Set(forwardedHeader, f.cluster.ForwardSecret())
	err := f.client(addr).DoTimeout(req, &ctx.Response, forwardTimeout)
	if err == nil {
		return true
	}
	ctx.Response.Reset()
	var op *net.OpError
	if retry && errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	writeError(ctx, actors.Errorf(actors.CodeHTTPError, "the leader could not be reached; a write may or may not have been applied, so re-read before retrying"))
	return true
}
