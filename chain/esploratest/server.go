// Package esploratest is an Esplora server for tests: it answers the
// endpoints of Esplora's REST API that chain.Client calls, in Esplora's
// JSON, from any chain.Source behind it. Over btcdsource.Source on the
// btcd regtest node of internal/regtest it serves a real chain, so the
// Esplora client can be tested, and its polling measured (bench watch
// --source esplora), without an electrs and a bitcoind.
//
// It serves, as Esplora does:
//
//	GET /address/{a}                        lifetime counters, confirmed and mempool
//	GET /address/{a}/txs/chain              the newest 25 confirmed transactions
//	GET /address/{a}/txs/chain/{last_seen}  the 25 just older than last_seen
//	GET /address/{a}/txs/mempool            the unconfirmed transactions, newest first
//	GET /tx/{txid}                          one transaction; 404 if unknown
//	GET /blocks                             the ten newest blocks, newest first
//	GET /block-height/{height}              a block's hash, as text; 404 above the tip
//
// Its JSON holds what a chain.Source knows, so less than a real
// Esplora's (no scripts, sizes, weights, txo counts or block headers'
// fields): every field chain.Client reads is there, in Esplora's names
// and types. It counts the requests it receives (Requests). It is for
// tests only.
package esploratest

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// Config is what a Server serves.
type Config struct {
	// Source answers every request (btcdsource.Source over a regtest
	// node, for a real chain).
	Source chain.Source
	// TLS, when set, makes the server speak HTTPS.
	TLS *tls.Config
}

// readHeaderTimeout bounds a request's headers; the Source's own
// timeouts bound the rest.
const readHeaderTimeout = 10 * time.Second

// Server is a running Esplora server on a loopback port of its own.
type Server struct {
	src      chain.Source
	mux      *http.ServeMux
	ln       net.Listener
	http     *http.Server
	tls      bool
	requests atomic.Int64
	served   chan struct{} // closed when Serve has returned
}

// Start serves cfg.Source until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Source == nil {
		return nil, errors.New("esploratest: no chain source")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	s := &Server{src: cfg.Source, ln: ln, tls: cfg.TLS != nil, served: make(chan struct{})}
	s.mux = s.routes()
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: readHeaderTimeout}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(ln) // ends with Close
	}()
	return s, nil
}

// URL is the server's base URL, what esplora:URL names.
func (s *Server) URL() string {
	if s.tls {
		return "https://" + s.ln.Addr().String()
	}
	return "http://" + s.ln.Addr().String()
}

// Requests is how many requests the server has received, whatever
// their path or answer.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Close stops serving and ends every connection.
func (s *Server) Close() error {
	err := s.http.Close()
	<-s.served
	return err
}

// ServeHTTP counts the request and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mux.ServeHTTP(w, r)
}
