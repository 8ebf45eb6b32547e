package system_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkOwnerReadsDuringSignIns measures what password hashing costs
// everyone else: one client reads GET /owner/v1/keys b.N times, one read
// every millisecond, while signIns other clients sign in with the right
// password in a loop (each sign-in is a bcrypt compare at the server's
// default cost and a session write). A sign-in turned away (503 when the
// hashing queue is full) waits its Retry-After, as a client should. It
// reports the reads' latency percentiles and the sign-ins completed and
// turned away per second while the reads ran.
//
//	go test ./system_test -run '^$' -bench OwnerReadsDuringSignIns -benchtime 2000x
func BenchmarkOwnerReadsDuringSignIns(b *testing.B) {
	for _, signIns := range []int{0, 8, 16} {
		b.Run(fmt.Sprintf("signins=%d", signIns), func(b *testing.B) {
			s := startServer(b)
			a := s.createAccount(b, "base")
			client := benchClient(s)
			body, _ := json.Marshal(map[string]string{"account_id": a.ID, "password": a.Password})

			var stop, timing atomic.Bool
			var signedIn, refused atomic.Int64
			var wg sync.WaitGroup
			for range signIns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						_, err := timedRequest(client, "POST", s.URL+"/owner/v1/sessions", "", body, 201)
						switch {
						case err != nil && timing.Load():
							refused.Add(1)
						case timing.Load():
							signedIn.Add(1)
						}
						if err != nil {
							time.Sleep(time.Second) // Retry-After
						}
					}
				}()
			}
			// Let the sign-ins fill the server before timing the reads.
			time.Sleep(300 * time.Millisecond)
			latencies := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			timing.Store(true)
			start := time.Now()
			for range b.N {
				took, err := timedRequest(client, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil, 200)
				if err != nil {
					b.Fatal(err)
				}
				latencies = append(latencies, took)
				time.Sleep(time.Millisecond)
			}
			elapsed := time.Since(start)
			timing.Store(false)
			b.StopTimer()
			stop.Store(true)
			wg.Wait()
			slices.Sort(latencies)
			pct := func(p float64) float64 {
				return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds())
			}
			b.ReportMetric(pct(0.50), "read-p50-µs")
			b.ReportMetric(pct(0.90), "read-p90-µs")
			b.ReportMetric(pct(0.99), "read-p99-µs")
			b.ReportMetric(float64(latencies[len(latencies)-1].Microseconds()), "read-max-µs")
			b.ReportMetric(float64(signedIn.Load())/elapsed.Seconds(), "signins/s")
			b.ReportMetric(float64(refused.Load())/elapsed.Seconds(), "refused/s")
		})
	}
}
