package system_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"github.com/addrwatch/addrwatch/internal/testaddr"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// The benchmarks drive a real addrwatchd process over loopback HTTP with
// fasthttp's client from benchConcurrency workers, and report requests/s
// and latency percentiles next to Go's ns/op.
//
//	go test ./system_test -run '^$' -bench . -benchtime 5s

const benchConcurrency = 32

func BenchmarkGetMe(b *testing.B) {
	s := startServer(b)
	a := s.createAccount(b, "base")
	key := s.createKey(b, a, "read")
	client := benchClient(s)
	runLoad(b, func(worker int) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			return timedRequest(client, "GET", s.URL+"/v1/me", key, nil, 200)
		}
	})
}

// BenchmarkCreatePortfolioCard measures durable creates: each is in the
// fsync'd raft log before it is answered. The base plan holds ten cards,
// so each worker deletes its ten cards after creating them; the deletes are
// durable writes too but only the creates are in the req/s and latency
// figures. writes/s counts both.
func BenchmarkCreatePortfolioCard(b *testing.B) {
	s := startServer(b)
	keys := make([]string, benchConcurrency)
	for i := range keys {
		keys[i] = s.createKey(b, s.createAccount(b, "base"), "write")
	}
	client := benchClient(s)
	var deletes atomic.Int64
	start := time.Now()
	defer func() {
		b.ReportMetric(float64(int64(b.N)+deletes.Load())/time.Since(start).Seconds(), "writes/s")
	}()
	runLoad(b, func(worker int) func() (time.Duration, error) {
		key := keys[worker]
		var created []map[string]any
		return func() (time.Duration, error) {
			if len(created) == 10 {
				for _, c := range created {
					body, _ := json.Marshal(map[string]any{"expected_version": c["version"]})
					if _, err := timedRequest(client, "DELETE", s.URL+"/v1/portfolio/cards/"+c["id"].(string), key, body, 200); err != nil {
						return 0, err
					}
					deletes.Add(1)
				}
				created = created[:0]
			}
			body, _ := json.Marshal(map[string]any{"address": randomAddress(), "name": "bench"})
			var card map[string]any
			took, err := timedRequestInto(client, "POST", s.URL+"/v1/portfolio/cards", key, body, 201, &card)
			if err == nil {
				created = append(created, card["card"].(map[string]any))
			}
			return took, err
		}
	})
}

func benchClient(s *server) *fasthttp.Client {
	return &fasthttp.Client{MaxConnsPerHost: benchConcurrency * 2, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
}

// runLoad runs b.N requests spread over benchConcurrency workers and
// reports throughput and latency percentiles.
func runLoad(b *testing.B, newWorker func(worker int) func() (time.Duration, error)) {
	var next atomic.Int64
	latencies := make([][]time.Duration, benchConcurrency)
	errs := make([]error, benchConcurrency)
	workers := make([]func() (time.Duration, error), benchConcurrency)
	for w := range workers {
		workers[w] = newWorker(w)
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range benchConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				took, err := workers[w]()
				if err != nil {
					errs[w] = err
					return
				}
				latencies[w] = append(latencies[w], took)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

func timedRequest(c *fasthttp.Client, method, url, bearer string, body []byte, want int) (time.Duration, error) {
	return timedRequestInto(c, method, url, bearer, body, want, nil)
}

func timedRequestInto(c *fasthttp.Client, method, url, bearer string, body []byte, want int, into any) (time.Duration, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	start := time.Now()
	err := c.Do(req, resp)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode() != want {
		return 0, fmt.Errorf("%s %s: status %d: %s", method, url, resp.StatusCode(), resp.Body())
	}
	if into != nil {
		if err := json.Unmarshal(resp.Body(), into); err != nil {
			return 0, err
		}
	}
	return took, nil
}

// randomAddress returns a fresh valid mainnet P2PKH address.
func randomAddress() string {
	var h [20]byte
	rand.Read(h[:])
	return testaddr.FromHash(h[:])
}
