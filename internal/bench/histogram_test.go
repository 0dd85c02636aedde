package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// nearestRank is the textbook percentile the histogram approximates.
func nearestRank(sorted []time.Duration, q float64) time.Duration {
	r := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(r, 1), len(sorted))-1]
}

func TestHistogramQuantilesWithinOnePercent(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	var vals []time.Duration
	for range 100000 {
		// Log-normal-ish latencies from ~50µs to seconds.
		d := time.Duration(math.Exp(rnd.NormFloat64()*1.5+14)) + time.Duration(rnd.IntN(100))
		vals = append(vals, d)
		h.Record(d)
	}
	slices.Sort(vals)
	if h.Count() != uint64(len(vals)) {
		t.Fatalf("count %d, want %d", h.Count(), len(vals))
	}
	if h.Max() != vals[len(vals)-1] {
		t.Fatalf("max %s, want %s", h.Max(), vals[len(vals)-1])
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
		want, got := nearestRank(vals, q), h.Quantile(q)
		if got < want || float64(got-want) > float64(want)/128+1 {
			t.Errorf("q%.3f = %s, want %s (not below it, within 1/128)", q, got, want)
		}
	}
}

func TestHistogramExactSmallCases(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Mean() != 0 {
		t.Fatal("an empty histogram must answer 0")
	}
	// 100 values 1ms..100ms: p50 is the 50th (50ms), p99 the 99th (99ms).
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond} {
		got := h.Quantile(q)
		if got < want || got > want+want/128 {
			t.Errorf("q%.2f = %s, want %s", q, got, want)
		}
	}
	if h.Mean() != 50500*time.Microsecond {
		t.Errorf("mean %s, want 50.5ms", h.Mean())
	}
	// Values below 128ns are exact.
	var s Histogram
	for _, v := range []time.Duration{3, 3, 7, 100} {
		s.Record(v)
	}
	if s.Quantile(0.5) != 3 || s.Quantile(0.75) != 7 || s.Quantile(1) != 100 {
		t.Errorf("small values: p50 %d p75 %d p100 %d", s.Quantile(0.5), s.Quantile(0.75), s.Quantile(1))
	}
}

func TestHistogramMergeEqualsOne(t *testing.T) {
	var a, b, all Histogram
	for i := range 1000 {
		d := time.Duration(i*i) * time.Microsecond
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	if a.Count() != all.Count() || a.Max() != all.Max() || a.Mean() != all.Mean() {
		t.Fatalf("merged count/max/mean %d/%s/%s, want %d/%s/%s", a.Count(), a.Max(), a.Mean(), all.Count(), all.Max(), all.Mean())
	}
	for _, q := range []float64{0.1, 0.5, 0.99} {
		if a.Quantile(q) != all.Quantile(q) {
			t.Errorf("q%.2f merged %s, one %s", q, a.Quantile(q), all.Quantile(q))
		}
	}
}

func TestBucketsCoverEveryValue(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 129, 255, 256, 1000, 1 << 20, 1<<40 + 12345, math.MaxInt64} {
		b := bucketOf(v)
		if b < 0 || b >= buckets {
			t.Fatalf("bucket %d of %d out of range", b, v)
		}
		if up := upper(b); up < v {
			t.Errorf("value %d above its bucket's upper edge %d", v, up)
		}
		if b > 0 && upper(b-1) >= v {
			t.Errorf("value %d belongs in an earlier bucket (%d ends at %d)", v, b-1, upper(b-1))
		}
	}
}

// TestLoadCountsWhatTheServerAnswered runs a load against a handler that
// counts what it serves and answers every 10th request with 500: the
// load's successes and errors must add up to what the server saw in the
// window, and its latencies must include the handler's 2ms.
func TestLoadCountsWhatTheServerAnswered(t *testing.T) {
	var served, failed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		time.Sleep(2 * time.Millisecond) // the handler's own work, not synchronisation
		if r.Header.Get("X-Bench") != "yes" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if n%10 == 0 {
			failed.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Encoding", "identity")
		_, _ = w.Write([]byte("hello"))
	}))
	defer srv.Close()
	res, err := Load{URL: srv.URL, Header: http.Header{"X-Bench": {"yes"}}, Connections: 4, Duration: 600 * time.Millisecond}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := res.Requests + res.Errors
	if total == 0 || uint64(served.Load()) < total || uint64(served.Load()) > total+4 {
		t.Fatalf("load counted %d answers (%d ok, %d errors); the server served %d (at most 4 cut off by the end)", total, res.Requests, res.Errors, served.Load())
	}
	if res.Errors == 0 || res.Errors > uint64(failed.Load()) {
		t.Errorf("errors %d, the server failed %d", res.Errors, failed.Load())
	}
	if res.Latency.Count() != res.Requests || res.Bytes != 5*res.Requests {
		t.Errorf("latency count %d, bytes %d for %d requests", res.Latency.Count(), res.Bytes, res.Requests)
	}
	if p50 := res.Latency.Quantile(0.5); p50 < 2*time.Millisecond {
		t.Errorf("p50 %s below the handler's 2ms", p50)
	}
	if res.Encoding != "identity" || res.FirstError != "status 500" {
		t.Errorf("encoding %q, first error %q", res.Encoding, res.FirstError)
	}
	if rps := res.RPS(); math.Abs(rps-float64(res.Requests)/0.6) > 1e-6 {
		t.Errorf("req/s %.1f", rps)
	}
}

func TestLoadRefusesNonLoopback(t *testing.T) {
	if _, err := (Load{URL: "http://192.0.2.1/", Connections: 1, Duration: time.Second}).Run(context.Background()); err == nil {
		t.Fatal("a load against a non-loopback address must be refused")
	}
}
