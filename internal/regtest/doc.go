// Package regtest runs a btcd node on the regression-test network for
// tests: a chain of our own, on loopback, whose blocks a test mines when
// it wants them. The node has the indexes a btcd chain source needs
// (--addrindex --txindex) and serves RPC over TLS with a certificate
// made for it, so a test talks to it exactly as the server talks to an
// owner's btcd.
//
// btcd itself is a Go tool dependency of this module (go.mod's tool
// directive, pinned at the version go.mod requires): `go tool -n btcd`
// builds it once into the build cache, through the module proxy like any
// other module, and prints its path. No test builds btcd by hand, and
// none skips because btcd is missing: a node that cannot start fails
// the test that asked for it, with the reason.
//
// Starting a node costs about a second (and its first chain of mature
// coins), so a test package mostly shares one (Shared): each test works
// with addresses of its own (NewKey) and never assumes a tip height. A
// test that mines and reorgs in ways the others would see takes a node
// of its own (Own), stopped when it ends, and can still run beside
// them. A package that uses Shared or Own calls Main from its
// TestMain, which also stops the node when the tests are done and makes
// sure no btcd outlives a test binary that was killed. A program that
// is no test (bench's watch command) calls Program from its main instead,
// and stops the node it started itself.
//
// The payments a test makes come from two places. The harness's wallet
// (btcd's integration/rpctest) holds the coinbase coins and pays any
// address (Node.Pay). A Key is an address whose private key the test
// holds: it can be funded, spend, and replace its own unconfirmed spend
// with a higher fee (BIP 125), which the harness's wallet cannot.
package regtest
