package btcdsource

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// socks5Proxy is the least of a SOCKS5 server (RFC 1928: no
// authentication, CONNECT to an IPv4 address or a name): enough to see
// the source's requests go through it. It counts the connections it
// made.
func socks5Proxy(t *testing.T) (addr string, connects *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	connects = &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if target, ok := socks5Handshake(c); ok {
					connects.Add(1)
					relay(c, target)
				}
			}()
		}
	}()
	return l.Addr().String(), connects
}

// socks5Handshake reads a client's greeting and CONNECT, dials the
// target and answers success.
func socks5Handshake(c net.Conn) (net.Conn, bool) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(c, head); err != nil || head[0] != 5 {
		return nil, false
	}
	if _, err := io.ReadFull(c, make([]byte, head[1])); err != nil {
		return nil, false
	}
	_, _ = c.Write([]byte{5, 0}) // no authentication
	req := make([]byte, 4)
	if _, err := io.ReadFull(c, req); err != nil || req[1] != 1 {
		return nil, false
	}
	var host string
	switch req[3] {
	case 1:
		ip := make([]byte, 4)
		if _, err := io.ReadFull(c, ip); err != nil {
			return nil, false
		}
		host = net.IP(ip).String()
	case 3:
		n := make([]byte, 1)
		if _, err := io.ReadFull(c, n); err != nil {
			return nil, false
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return nil, false
		}
		host = string(name)
	default:
		return nil, false
	}
	port := make([]byte, 2)
	if _, err := io.ReadFull(c, port); err != nil {
		return nil, false
	}
	target, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port)))))
	if err != nil {
		_, _ = c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return nil, false
	}
	_, _ = c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	return target, true
}

func relay(a, b net.Conn) {
	defer b.Close()
	done := make(chan struct{})
	go func() { _, _ = io.Copy(b, a); close(done) }()
	_, _ = io.Copy(a, b)
	_ = a.Close()
	<-done
}

// With --chain-proxy every request goes through the SOCKS5 proxy, TLS
// to btcd inside it, all three on the one connection the proxy made.
func TestRequestsGoThroughTheProxy(t *testing.T) {
	n := regtest.Shared(t)
	proxy, connects := socks5Proxy(t)
	src := open(t, n, Options{Proxy: "socks5://" + proxy})
	tip, err := src.Tip(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if hash, err := src.BlockHash(context.Background(), tip.Height); err != nil || hash != tip.Hash {
		t.Fatalf("through the proxy: %q, %v", hash, err)
	}
	if got := connects.Load(); got != 1 {
		t.Errorf("the proxy made %d connections for 3 requests, want 1", got)
	}
}
