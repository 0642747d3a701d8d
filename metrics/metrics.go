// Package metrics exposes what cosmosctl measures to Prometheus, so that probes run from
// many hosts aggregate in one place: per-region request latency, errors by status, and
// the hedges the engine sent and won and the ones its budget refused.
//
// It only translates measurements into Prometheus collectors and serves them; it takes
// no measurements of its own.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cosmosctl/cosmosctl/engine"
)

// Probe holds the collectors of one probing process.
type Probe struct {
	registry        *prometheus.Registry
	latency         *prometheus.HistogramVec
	server          *prometheus.HistogramVec
	network         *prometheus.HistogramVec
	requests        *prometheus.CounterVec
	hedgesSent      *prometheus.CounterVec
	hedgesWon       *prometheus.CounterVec
	budgetExhausted prometheus.Counter
}

// NewProbe registers cosmosctl's collectors in a registry of their own, with the Go and
// process collectors beside them.
func NewProbe() *Probe {
	p := &Probe{registry: prometheus.NewRegistry()}
	p.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "cosmosctl", Name: "request_duration_seconds",
		Help: "Latency of probe requests by region and request kind (read or account), errors included.",
		// 1 ms to ~33 s: from a local replica to an end-to-end timeout.
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"region", "request"})
	// 0.1 ms to ~52 s: a service's time for a point read is a fraction of a millisecond.
	fine := prometheus.ExponentialBuckets(0.0001, 2, 20)
	p.server = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "cosmosctl", Name: "server_duration_seconds",
		Help:    "The service's own time for probe requests that reported it (x-ms-request-duration-ms), by region and request kind.",
		Buckets: fine,
	}, []string{"region", "request"})
	p.network = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "cosmosctl", Name: "network_duration_seconds",
		Help:    "Round trip less the service's own time (network, queueing, the client) for probe requests that reported it, by region and request kind.",
		Buckets: fine,
	}, []string{"region", "request"})
	p.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "cosmosctl", Name: "requests_total",
		Help: `Probe requests by region and outcome: "ok", or the status/substatus ("503/0"), or "network".`,
	}, []string{"region", "request", "outcome"})
	p.hedgesSent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "cosmosctl", Name: "hedges_sent_total",
		Help: "Hedge attempts the engine sent, by the region they went to.",
	}, []string{"region"})
	p.hedgesWon = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "cosmosctl", Name: "hedges_won_total",
		Help: "Hedge attempts whose answer was used, by region.",
	}, []string{"region"})
	p.budgetExhausted = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "cosmosctl", Name: "hedge_budget_exhausted_total",
		Help: "Hedges the adaptive strategy's budget refused.",
	})
	p.registry.MustRegister(p.latency, p.server, p.network, p.requests, p.hedgesSent, p.hedgesWon, p.budgetExhausted,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return p
}

// ObserveRequest records one probe request.
func (p *Probe) ObserveRequest(region, request string, latency time.Duration, status, substatus int, failed bool) {
	p.latency.WithLabelValues(region, request).Observe(latency.Seconds())
	outcome := "ok"
	switch {
	case failed && status == 0:
		outcome = "network"
	case failed:
		outcome = strconv.Itoa(status) + "/" + strconv.Itoa(substatus)
	}
	p.requests.WithLabelValues(region, request, outcome).Inc()
}

// ObserveServerTime records, for one attempt that answered with the service's own
// time, that time and the rest of its round trip. An answer without it is not
// observed: a missing figure is never a zero.
func (p *Probe) ObserveServerTime(region, request string, server, network time.Duration) {
	p.server.WithLabelValues(region, request).Observe(server.Seconds())
	p.network.WithLabelValues(region, request).Observe(network.Seconds())
}

// ObserveOperation records the hedging an operation did.
func (p *Probe) ObserveOperation(d *engine.Diagnostics) {
	if d == nil {
		return
	}
	for _, a := range d.Attempts {
		if a.Reason != engine.ReasonHedge {
			continue
		}
		p.hedgesSent.WithLabelValues(a.Region).Inc()
		if a.Outcome == engine.OutcomeWon {
			p.hedgesWon.WithLabelValues(a.Region).Inc()
		}
	}
	for _, n := range d.Notes {
		if strings.HasPrefix(n, "budget exhausted") {
			p.budgetExhausted.Inc()
		}
	}
}

// Handler serves the metrics in the Prometheus exposition format.
func (p *Probe) Handler() http.Handler {
	return promhttp.HandlerFor(p.registry, promhttp.HandlerOpts{Registry: p.registry})
}

// Serve listens on addr (":9464", "127.0.0.1:0") and serves /metrics until ctx ends. It
// returns the address it listens on once listening, so that a caller can print it.
func Serve(ctx context.Context, addr string, p *Probe) (string, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", p.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	return ln.Addr().String(), done, nil
}
