// Package socks5test is a SOCKS5 proxy for tests: it accepts CONNECT by
// host name (no authentication), records the names it was asked for, and
// connects every one of them to one target, so that a test can show that
// a client went through the proxy and let the proxy resolve the name.
package socks5test

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Serve starts a proxy that connects everything to target, until the
// test ends. It returns its address and a func listing the host:port
// names clients asked for, in order.
func Serve(t testing.TB, target string) (addr string, asked func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var names []string
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				name, ok := handshake(conn)
				if !ok {
					return
				}
				mu.Lock()
				names = append(names, name)
				mu.Unlock()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				_, _ = conn.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}) // succeeded; bound address not told
				go func() { _, _ = io.Copy(up, conn) }()
				_, _ = io.Copy(conn, up)
			}()
		}
	}()
	return ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), names...)
	}
}

// handshake reads a client's greeting and CONNECT request and returns the
// host:port it asked for; only a request by domain name is accepted.
func handshake(conn net.Conn) (string, bool) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(conn, head); err != nil || head[0] != 5 {
		return "", false
	}
	if _, err := io.ReadFull(conn, make([]byte, head[1])); err != nil {
		return "", false
	}
	_, _ = conn.Write([]byte{5, 0}) // no authentication
	req := make([]byte, 5)
	if _, err := io.ReadFull(conn, req); err != nil || req[1] != 1 || req[3] != 3 {
		return "", false
	}
	name := make([]byte, int(req[4])+2)
	if _, err := io.ReadFull(conn, name); err != nil {
		return "", false
	}
	port := binary.BigEndian.Uint16(name[len(name)-2:])
	return string(name[:len(name)-2]) + ":" + strconv.Itoa(int(port)), true
}
