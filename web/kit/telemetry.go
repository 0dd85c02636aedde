package kit

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"countersign/internal/apperr"
)

// Telemetry is the Prometheus side of the console, for operators: request
// counts and latencies from an Echo middleware, and, read from PostgreSQL
// at each scrape, the dispatch queue depth, invocations per state
// (dispatch outcomes) and the unverified count. It is served by
// PrometheusHandler on an address of its own, never under the console's
// /metrics page, which is the manager's action-outcome metrics.
type Telemetry struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// StateCounts counts invocations by state (*store.Store).
type StateCounts interface {
	InvocationStateCounts(ctx context.Context) (map[string]int64, error)
}

// NewTelemetry registers the console's Prometheus series; st is read at each
// scrape.
func NewTelemetry(st StateCounts) *Telemetry {
	t := &Telemetry{registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_http_requests_total",
			Help: "HTTP requests by method, route pattern and status."}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "countersign_http_request_duration_seconds",
			Help: "HTTP request latency by method and route pattern.", Buckets: prometheus.DefBuckets}, []string{"method", "route"}),
	}
	t.registry.MustRegister(t.requests, t.latency, dbCollector{st: st},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return t
}

// Middleware counts and times every request by its route pattern (not its
// URL, so ids do not multiply the series).
func (t *Telemetry) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		status := c.Response().Status
		if err != nil {
			var he *echo.HTTPError
			if errors.As(err, &he) {
				status = he.Code
			} else if s, ok := StatusOf[apperr.KindOf(err)]; ok {
				status = s
			} else {
				status = http.StatusInternalServerError
			}
		}
		method := methodLabel(c.Request().Method)
		t.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
		t.latency.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
		return err
	}
}

// methodLabel is a request's method as a label: the standard methods by
// name, any other "other", so that a client inventing methods cannot create
// series without end.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// PrometheusHandler serves the Prometheus exposition of the telemetry. With
// a token, a scrape must send "Authorization: Bearer <token>" or gets 401.
func (t *Telemetry) PrometheusHandler(token string) http.Handler {
	h := promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="telemetry"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

var (
	queueDepthDesc = prometheus.NewDesc("countersign_dispatch_queue_depth",
		"Approved invocations waiting for a permit.", nil, nil)
	unverifiedDesc = prometheus.NewDesc("countersign_unverified_invocations",
		"Invocations whose outcome is unknown and wait for reconciliation.", nil, nil)
	statesDesc = prometheus.NewDesc("countersign_invocations",
		"Invocations by state: the dispatch outcomes (completed, failed, unverified, not_dispatched) and the rest.", []string{"state"}, nil)
)

// dbCollector reads the dispatch figures from PostgreSQL at each scrape.
type dbCollector struct{ st StateCounts }

func (d dbCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- unverifiedDesc
	ch <- statesDesc
}

func (d dbCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	states, err := d.st.InvocationStateCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(statesDesc, err)
		return
	}
	for _, s := range []string{"proposed", "awaiting_confirmation", "awaiting_approval", "approved", "dispatching", "completed",
		"failed", "unverified", "not_dispatched", "rejected", "expired", "reversed"} {
		ch <- prometheus.MustNewConstMetric(statesDesc, prometheus.GaugeValue, float64(states[s]), s)
	}
	ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(states["approved"]))
	ch <- prometheus.MustNewConstMetric(unverifiedDesc, prometheus.GaugeValue, float64(states["unverified"]))
}
