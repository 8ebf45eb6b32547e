// Package site is the owner's site: the server-rendered pages on the
// public listener at / (sign-in, API access, settings, downloads,
// Portfolio, Spaces, the Sheet editor, History, agent activity, the
// notification settings, delivery log and centre, and the live view's
// polls), with its templates and assets embedded (templates/, static/).
//
// What lives here: the handlers (one file per section: access.go,
// settings.go, explorer.go, labels.go, portfolio.go, spaces.go, sheet.go,
// history.go with history_query.go, activity.go, notifications.go, notify_rules.go, deliveries.go,
// centre.go, live.go), the session cookie, CSRF and same-origin rules
// (session.go), the signed-in gate and its error pages (site.go), and the
// rendering with its security headers (render.go, rows.go).
// Beside them: the first run's getting-started list on the Portfolio,
// where sign-in lands (first_run.go), the words of a reached limit that
// replace a create form (limits.go), and agent activity in the owner's
// words (activity_words.go).
//
// What it depends on: actors (the queries, commands, views and rules it
// runs for the owner), views (the History shapes and the bounds it shares
// with the owner API), balances (the cards' balances and their totals, from
// the balance source httpd hands to New, as the History summary reads
// them; balances.go), chain (the coin list) and fasthttp. Everything else
// it takes through the three interfaces it declares in backend.go, which
// httpd implements (httpd/site_backend.go) and hands to New:
//
//   - Store: an owner query on the leader, passive or not; a proposal; a
//     login's account; a new ID.
//   - Owner: the owner API's operations that are more than one command
//     (sign-in, key creation, login, password and owner-secret changes,
//     account deletion, label download and import, the History CSV, the
//     History search, a note save, a notification channel's creation and
//     a webhook secret's rotation), so the site runs the same rules.
//   - Edge: whether the client used HTTPS, the session token's shape, the
//     owner-credential back-off, and the one conversion of an error to the
//     spec's {code, error} and status.
//
// It imports no httpd: httpd imports it to mount its routes
// (Site.Register) and for the names both sides share (SessionToken,
// OurOrigin, DownloadsPrefix, AssetsPrefix). A page holds errors typed
// (*actors.Error), converted from the server's once (Site.typed); the
// queries a page is drawn from run through pageReads, which keeps the
// first refusal and shows it once.
package site
