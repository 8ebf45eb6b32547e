package esploratest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/btcdsource"
	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
	"github.com/addrwatch/addrwatch/chain/esploratest"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

func TestMain(m *testing.M) { regtest.Main(m) }

// serve starts an Esplora server over btcd's own source on the node,
// both closed with the test.
func serve(t *testing.T, n *regtest.Node, cfg esploratest.Config) *esploratest.Server {
	t.Helper()
	r := n.RPC()
	b, err := btcdsource.Open(chain.SourceSpec{Kind: chain.SourceBtcd, URL: r.URL()}, btcdsource.Options{Network: chain.Regtest, Cert: r.Cert})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	cfg.Source = b
	srv, err := esploratest.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// The conformance suite every source passes, here the Esplora client
// over the server: what the client decodes of the server's JSON must be
// what btcd's own source says of the chain.
func TestConformance(t *testing.T) {
	n := regtest.Shared(t)
	srv := serve(t, n, esploratest.Config{})
	c, err := chain.NewClient(srv.URL(), chain.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sourcetest.Run(t, c, sourcetest.RegtestChain(t, n))
}

// The server answers as Esplora does where the client only sees a
// status: 400 for an invalid address, 404 for an unknown transaction and
// a height above the tip, [] for an empty listing, {"confirmed":false}
// for a mempool transaction's status, the ten newest blocks newest
// first; and it counts every request, over HTTPS too.
func TestAnswersAsEsploraDoes(t *testing.T) {
	n := regtest.Shared(t)
	certPEM, tlsCfg, err := electrumtest.SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, n, esploratest.Config{TLS: tlsCfg})
	tr, err := chain.Reach{CertPEM: certPEM}.HTTPTransport(1)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: tr}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := hc.Get(srv.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	key := sourcetest.Must[*regtest.Key](t)(n.NewKey(regtest.P2WPKH))
	pending := sourcetest.Must[string](t)(key.Fund(10_000))
	height, tip, err := n.Tip()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		status int
		body   string // a prefix of the body, when not empty
	}{
		{"/address/nonsense", 400, ""},
		{"/tx/" + strings.Repeat("0", 64), 404, ""},
		{"/block-height/" + itoa(height+1000), 404, ""},
		{"/block-height/" + itoa(height), 200, tip},
		{"/address/" + key.Address + "/txs/chain", 200, "[]"},
		{"/tx/" + pending, 200, `{"txid":"` + pending + `"`},
	} {
		status, body := get(c.path)
		if status != c.status || !strings.HasPrefix(body, c.body) {
			t.Errorf("GET %s: %d %q, want %d %q…", c.path, status, body, c.status, c.body)
		}
	}
	var tx struct {
		Status map[string]any `json:"status"`
	}
	if _, body := get("/tx/" + pending); json.Unmarshal([]byte(body), &tx) != nil || len(tx.Status) != 1 || tx.Status["confirmed"] != false {
		t.Errorf("a mempool transaction's status: %v", tx.Status)
	}
	// A coinbase spends nothing: one input, is_coinbase, prevout null.
	coinbase := coinbaseOf(t, n, tip)
	var cb struct {
		Vin []map[string]any `json:"vin"`
	}
	if _, body := get("/tx/" + coinbase); json.Unmarshal([]byte(body), &cb) != nil || len(cb.Vin) != 1 || cb.Vin[0]["is_coinbase"] != true || cb.Vin[0]["prevout"] != nil {
		t.Errorf("the coinbase's inputs: %v", cb.Vin)
	}
	var blocks []struct {
		ID     string `json:"id"`
		Height int64  `json:"height"`
	}
	if _, body := get("/blocks"); json.Unmarshal([]byte(body), &blocks) != nil || len(blocks) != 10 || blocks[0].ID != tip {
		t.Fatalf("GET /blocks: %+v, want ten from the tip %s", blocks, tip)
	}
	for i, b := range blocks {
		hash, err := n.BlockHash(height - int64(i))
		if b.Height != height-int64(i) || err != nil || b.ID != hash {
			t.Errorf("block %d of /blocks: %+v, want %s at %d", i, b, hash, height-int64(i))
		}
	}
	if got := srv.Requests(); got != 9 {
		t.Errorf("%d requests counted, want 9", got)
	}
	c, err := chain.NewClient(srv.URL(), chain.ClientOptions{Reach: chain.Reach{CertPEM: certPEM}})
	if err != nil {
		t.Fatal(err)
	}
	if err := chain.CheckNetwork(context.Background(), c, chain.Regtest); err != nil {
		t.Errorf("the client over the server: %v", err)
	}
}

// coinbaseOf is the ID of the coinbase transaction of block hash.
func coinbaseOf(t *testing.T, n *regtest.Node, hash string) string {
	t.Helper()
	h, err := chainhash.NewHashFromStr(hash)
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.Client().GetBlock(h)
	if err != nil {
		t.Fatal(err)
	}
	return b.Transactions[0].TxHash().String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
