package httpd

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// The owner's site lives in package site; it runs on what it declares it
// needs (site.Store, site.Owner, site.Edge), which siteBackend gives it
// from this Server: the same store, operations, back-off and error
// conversion the owner API runs on.

// newSite builds the site on s.
func (s *Server) newSite() *site.Site {
	b := siteBackend{s}
	return site.New(site.Config{Store: b, Owner: b, Edge: b, Balances: s.balances, Log: s.log, Now: s.now, Chain: s.chain})
}

// siteBackend is the Server as the site sees it.
type siteBackend struct{ s *Server }

var (
	_ site.Store = siteBackend{}
	_ site.Owner = siteBackend{}
	_ site.Edge  = siteBackend{}
)

// request is the request value of a site call made as the owner's
// session, cred: of the owner API's audience, as fresh as the client asked
// (ConsistencyHeader). ctx is nil for a call through site.Store, which has
// none.
func (b siteBackend) request(ctx *fasthttp.RequestCtx, cred actors.Credential) *request {
	if ctx == nil {
		return &request{aud: audienceOwner, cred: cred}
	}
	r := newRequest(ctx, audienceOwner)
	r.cred = cred
	return r
}

func (b siteBackend) Query(cred actors.Credential, q actors.Query, passive bool) (actors.Result, error) {
	c, cancel := b.s.context()
	defer cancel()
	r := b.request(nil, cred)
	r.passive = passive
	return b.s.query(c, r, q, ReadLeader)
}

func (b siteBackend) Propose(cmd *actors.Command) (actors.Result, error) {
	c, cancel := b.s.context()
	defer cancel()
	res, err := b.s.propose(c, cmd)
	if err == nil && b.s.notifyWake != nil && wakesDeliverer(cmd.Payload) {
		b.s.notifyWake(cmd.Account)
	}
	return res, err
}

// wakesDeliverer reports whether an owner's command may have made
// notifications due, as the owner API's routes that wake the deliverer
// (wakeDeliverer): a "send again", a channel enabled.
func wakesDeliverer(p actors.Payload) bool {
	switch p.(type) {
	case *actors.RedeliverEntry, *actors.UpdateNotifyChannel:
		return true
	}
	return false
}

func (b siteBackend) NewID() string { return newID() }

func (b siteBackend) AccountForLogin(login string) (string, bool) {
	return b.s.store.AccountForLogin(login)
}

func (b siteBackend) SignIn(ctx *fasthttp.RequestCtx, login, accountID, password string) (string, error) {
	token, _, err := b.s.signInOwner(b.request(ctx, actors.Credential{}), login, accountID, password)
	return token, err
}

func (b siteBackend) CreateKey(cred actors.Credential, capability actors.Level, name string) (site.CreatedKey, error) {
	c, cancel := b.s.context()
	defer cancel()
	created, err := b.s.CreateKey(c, cred, capability, name)
	return site.CreatedKey{Name: created.Name, Capability: created.Capability, Key: created.Key}, err
}

func (b siteBackend) ReplaceLogin(ctx *fasthttp.RequestCtx, cred actors.Credential, login, current string) error {
	_, err := b.s.replaceLogin(b.request(ctx, cred), login, current)
	return err
}

func (b siteBackend) ReplacePassword(ctx *fasthttp.RequestCtx, cred actors.Credential, current, next string) (string, error) {
	return b.s.replacePassword(b.request(ctx, cred), current, next)
}

func (b siteBackend) ReplaceOwnerSecret(ctx *fasthttp.RequestCtx, cred actors.Credential, current string) (string, error) {
	return b.s.replaceOwnerSecret(b.request(ctx, cred), current)
}

func (b siteBackend) RemoveAccount(ctx *fasthttp.RequestCtx, cred actors.Credential, current string) error {
	return b.s.removeAccount(b.request(ctx, cred), current)
}

func (b siteBackend) ServeLabels(ctx *fasthttp.RequestCtx, cred actors.Credential) error {
	return b.s.serveLabels(b.request(ctx, cred))
}

func (b siteBackend) ImportLabels(cred actors.Credential, file []byte, dryRun bool) (site.LabelImport, error) {
	report, err := b.s.importLabels(b.request(nil, cred), file, dryRun)
	return report.forSite(), err
}

func (b siteBackend) ServeHistoryCSV(ctx *fasthttp.RequestCtx, cred actors.Credential, cardID string) {
	if err := b.s.serveHistoryCSV(b.request(ctx, cred), cardID); err != nil {
		writeError(ctx, err)
	}
}

func (b siteBackend) SearchHistory(ctx *fasthttp.RequestCtx, cred actors.Credential, q views.HistoryQuery) (views.HistoryResults, error) {
	c, cancel := readContext(upstreamTimeout)
	defer cancel()
	return b.s.searchHistory(c, b.request(ctx, cred), q, ReadLeader)
}

func (b siteBackend) SaveNote(ctx *fasthttp.RequestCtx, cred actors.Credential, who actors.Principal, txid, text string) error {
	c, cancel := readContext(upstreamTimeout)
	defer cancel()
	_, err := b.s.saveNote(c, b.request(ctx, cred), &who, txid, text)
	return err
}

func (b siteBackend) CreateNotifyChannel(cred actors.Credential, kind, name, where string) (actors.ChannelCreatedView, error) {
	c, cancel := b.s.context()
	defer cancel()
	req := channelCreateRequest{Kind: &kind, Name: &name}
	if kind == string(actors.ChannelEmail) {
		req.Address = &where
	} else {
		req.URL = &where
	}
	return b.s.makeNotifyChannel(c, b.request(nil, cred), req)
}

func (b siteBackend) RotateNotifySecret(cred actors.Credential, channelID string, grace time.Duration) (string, *string, error) {
	c, cancel := b.s.context()
	defer cancel()
	v, err := b.s.rotateNotifySecretAs(c, b.request(nil, cred), channelID, int64(grace/time.Second))
	return v.Secret, v.PreviousSecretUntil, err
}

func (b siteBackend) TestNotifyChannel(cred actors.Credential, channelID string) (site.ChannelTest, error) {
	c, cancel := b.s.context()
	defer cancel()
	v, err := b.s.testChannelAs(c, b.request(nil, cred), channelID)
	return site.ChannelTest(v), err
}

func (b siteBackend) SendsEmail() bool {
	return b.s.notifyTester != nil && b.s.notifyTester.SendsEmail()
}

func (b siteBackend) IsHTTPS(ctx *fasthttp.RequestCtx) bool { return b.s.requestIsHTTPS(ctx) }

func (b siteBackend) Session(token string) (actors.Credential, bool) {
	return parseBearer(token, b.s.now().UnixNano())
}

func (b siteBackend) BackOff(ctx *fasthttp.RequestCtx, account string) error {
	return b.s.owner.BackOff(ctx, account)
}

func (b siteBackend) CredentialFailed(ctx *fasthttp.RequestCtx, account string) {
	b.s.owner.BearerFailed(ctx, account)
}

func (b siteBackend) SpecError(err error) *actors.Error { return specError(err) }

func (b siteBackend) Status(code actors.Code) int { return StatusOf(code) }

func (b siteBackend) WriteError(ctx *fasthttp.RequestCtx, err error) { writeError(ctx, err) }

func (b siteBackend) WriteJSON(ctx *fasthttp.RequestCtx, status int, body any) {
	writeJSON(ctx, status, body)
}
