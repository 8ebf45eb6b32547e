package edge

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"testing"
	"time"
)

// lazyPair is a served connection behind LazyDeadlines (server) and its
// client, over loopback TCP.
func lazyPair(t *testing.T) (server *lazyConn, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lazy := LazyDeadlines(ln)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := lazy.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := <-accepted
	if c == nil {
		t.Fatal("nothing accepted")
	}
	t.Cleanup(func() { c.Close(); client.Close() })
	return c.(*lazyConn), client
}

// countingConn counts the deadlines set on the socket itself.
type countingConn struct {
	net.Conn
	reads, writes int
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.reads++
	return c.Conn.SetReadDeadline(t)
}

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.writes++
	return c.Conn.SetWriteDeadline(t)
}

// fasthttp's pattern, a thousand keep-alive requests in a row (idle
// deadline, read deadline, write deadline each), arms the socket once
// each way, where it used to move it three thousand times.
func TestLazyDeadlinesArmTheSocketOncePerPeriod(t *testing.T) {
	server, client := lazyPair(t)
	counted := &countingConn{Conn: server.Conn}
	server.Conn = counted
	go io.Copy(io.Discard, client)
	for range 1000 {
		now := time.Now()
		if err := server.SetReadDeadline(now.Add(idleTimeout)); err != nil {
			t.Fatal(err)
		}
		if err := server.SetReadDeadline(now.Add(readTimeout)); err != nil {
			t.Fatal(err)
		}
		if err := server.SetWriteDeadline(now.Add(writeTimeout)); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	// The first idle deadline arms; the read timeout, earlier, arms again.
	if counted.reads != 2 || counted.writes != 1 {
		t.Fatalf("the socket's deadlines moved %d times (read) and %d (write) for 1000 requests", counted.reads, counted.writes)
	}
}

// A read waits until the deadline last asked for, even when the socket
// was armed with an earlier one: the armed deadline fires, and the read
// carries on.
func TestALazilyMovedReadDeadlineStillWaits(t *testing.T) {
	server, client := lazyPair(t)
	readLate(t, server, client)
}

// readLate arms server's read deadline 100 ms ahead, asks for a later
// one, and reads what client writes 400 ms later.
func readLate(t *testing.T, server, client net.Conn) {
	t.Helper()
	start := time.Now()
	server.SetReadDeadline(start.Add(100 * time.Millisecond))
	server.SetReadDeadline(start.Add(3 * time.Second)) // later: not armed yet
	go func() {
		time.Sleep(400 * time.Millisecond)
		client.Write([]byte("late"))
	}()
	buf := make([]byte, 8)
	n, err := server.Read(buf)
	if err != nil || string(buf[:n]) != "late" {
		t.Fatalf("read %q, %v: the armed deadline ended the read before the wanted one", buf[:n], err)
	}
}

// A read times out at the deadline asked for: not at an earlier armed
// one, and not at a later one it replaced.
func TestALazyReadTimesOutWhenAsked(t *testing.T) {
	server, _ := lazyPair(t)
	start := time.Now()
	server.SetReadDeadline(start.Add(100 * time.Millisecond))
	server.SetReadDeadline(start.Add(300 * time.Millisecond))
	_, err := server.Read(make([]byte, 8))
	if took := time.Since(start); !errors.Is(err, os.ErrDeadlineExceeded) || took < 300*time.Millisecond {
		t.Fatalf("read ended after %v with %v, want a timeout at 300ms", took, err)
	}

	// An earlier deadline is armed at once: the read ends long before
	// the later one it replaced.
	start = time.Now()
	server.SetReadDeadline(start.Add(time.Hour))
	server.SetReadDeadline(start.Add(100 * time.Millisecond))
	_, err = server.Read(make([]byte, 8))
	if took := time.Since(start); !errors.Is(err, os.ErrDeadlineExceeded) || took >= time.Hour {
		t.Fatalf("read ended after %v with %v, want a timeout at 100ms", took, err)
	}

	// No deadline wanted: the armed one fires and the read goes on.
	server.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	server.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := server.Read(make([]byte, 8))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("read ended with %v though no deadline was wanted", err)
	case <-time.After(300 * time.Millisecond):
	}
}

// A write the client is slow to take goes on past the armed deadline
// while the wanted one is ahead, and ends whole.
func TestALazilyMovedWriteDeadlineStillWaits(t *testing.T) {
	server, client := lazyPair(t)
	start := time.Now()
	server.SetWriteDeadline(start.Add(100 * time.Millisecond))
	server.SetWriteDeadline(start.Add(5 * time.Second))
	payload := bytes.Repeat([]byte("w"), 32<<20) // more than the socket buffers hold
	got := make(chan int64, 1)
	go func() {
		time.Sleep(400 * time.Millisecond) // past the armed deadline
		n, _ := io.CopyN(io.Discard, client, int64(len(payload)))
		got <- n
	}()
	n, err := server.Write(payload)
	if err != nil || n != len(payload) {
		t.Fatalf("wrote %d of %d bytes: %v", n, len(payload), err)
	}
	if r := <-got; r != int64(len(payload)) {
		t.Fatalf("the client read %d bytes", r)
	}
}

// Under TLS, a read that outlives the armed deadline goes on too (the
// carrying on happens below crypto/tls, which would take a timed-out
// write as the end of the connection).
func TestLazyDeadlinesUnderTLS(t *testing.T) {
	cert := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tlsLn := tls.NewListener(LazyDeadlines(ln), &tls.Config{Certificates: []tls.Certificate{cert}})
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := tlsLn.Accept()
		if c != nil {
			c.(*tls.Conn).Handshake()
		}
		accepted <- c
	}()
	client, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	defer server.Close()
	readLate(t, server, client)
	if _, err := server.Write([]byte("answer")); err != nil {
		t.Fatalf("the connection broke after a lazy deadline fired: %v", err)
	}
}

// selfSigned is a certificate for 127.0.0.1 that the test's client does
// not check.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
