package emulator

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// lowercaseHeaders makes every response header name go out in lower case, as the
// service sends them. Go's http.Header canonicalises names (X-Ms-Session-Token, Etag),
// and HTTP/1.1 writes map keys as given; the official Python SDK looks headers up in a
// plain dict by their lower-case names, so with canonical names it loses continuation
// tokens, retry-after, session tokens and substatus. Doing it here, below every handler,
// covers headers that any code in the emulator sets.
func lowercaseHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&lowercaseWriter{ResponseWriter: w}, r)
	})
}

// lowercaseWriter renames the header map's keys when the header is sent: at WriteHeader,
// or at the first Write or Flush that sends it implicitly.
type lowercaseWriter struct {
	http.ResponseWriter
	sent bool
}

func (w *lowercaseWriter) WriteHeader(code int) {
	if !w.sent && code >= 200 {
		w.sent = true
		lowercaseKeys(w.ResponseWriter.Header())
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *lowercaseWriter) Write(p []byte) (int, error) {
	if !w.sent {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *lowercaseWriter) Flush() {
	if !w.sent {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack lets the emulator drop connections (faults) through the wrapper.
func (w *lowercaseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap serves http.ResponseController (deadlines, full duplex).
func (w *lowercaseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// lowercaseKeys moves every key of h to its lower-case form. net/http adds Date and
// Content-Type itself, in canonical case, unless the map has those keys: a nil value
// under the canonical key suppresses them (documented on http.ResponseWriter.Header),
// and the emulator sends its own in lower case (a body without a content type is left
// to net/http's sniffing). Content-Length stays canonical: net/http
// reads the body length from that exact key (without it, it would chunk the body).
func lowercaseKeys(h http.Header) {
	var buf [24]string
	keys := buf[:0]
	for k := range h {
		if k != "Content-Length" && hasUpper(k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		v := h[k]
		delete(h, k)
		if v == nil {
			continue
		}
		lk := lowerName(k)
		h[lk] = append(h[lk], v...)
	}
	if _, ok := h["date"]; !ok {
		h["date"] = []string{time.Now().UTC().Format(http.TimeFormat)}
	}
	h["Date"] = nil
	if _, ok := h["content-type"]; ok {
		h["Content-Type"] = nil
	}
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// lowerNames caches lower-case header names: the emulator sets a few dozen names,
// each on nearly every response, and the cache spares an allocation per header.
var lowerNames sync.Map

func lowerName(k string) string {
	if v, ok := lowerNames.Load(k); ok {
		return v.(string)
	}
	lk := strings.ToLower(k)
	lowerNames.Store(k, lk)
	return lk
}
