package emulator

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// serverLog is where the emulator reports its own trouble: handler panics, net/http's
// server errors (an accept loop failing, a handler misusing its ResponseWriter) and an
// endpoint that stopped serving. Those used to be discarded, which hid emulator bugs.
// Connections ending under the server (a client or a refuse fault resetting them) are
// expected and not reported, and at most logBurst messages go out at once and then one
// per logEvery, so that a failure repeating on every request cannot flood a terminal.
type serverLog struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	tokens  float64
	last    time.Time
	dropped int
}

const (
	logBurst = 10
	logEvery = 6 * time.Second
)

// quietErrors are the marks of a connection ended by its peer or by the emulator's own
// faults: routine for an emulator that rehearses outages.
var quietErrors = []string{"connection reset by peer", "broken pipe", "use of closed network connection"}

func newServerLog(w io.Writer, now func() time.Time) *serverLog {
	return &serverLog{w: w, now: now, tokens: logBurst}
}

// logger is a standard logger over l, for http.Server.ErrorLog.
func (l *serverLog) logger() *log.Logger {
	return log.New(l, "cosmosctl emulator: ", log.LstdFlags)
}

// Write takes one message (log.Logger writes each in one call).
func (l *serverLog) Write(p []byte) (int, error) {
	msg := string(p)
	for _, q := range quietErrors {
		if strings.Contains(msg, q) {
			return len(p), nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(logBurst, l.tokens+float64(now.Sub(l.last))/float64(logEvery))
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return len(p), nil
	}
	l.tokens--
	if l.dropped > 0 {
		fmt.Fprintf(l.w, "cosmosctl emulator: (%d more messages not shown: at most %d at once, then one every %v)\n", l.dropped, logBurst, logEvery)
		l.dropped = 0
	}
	_, _ = l.w.Write(p)
	return len(p), nil
}

// recoverPanic is deferred by the handler: a panic is logged with the request line and
// its stack, and the connection is then aborted as net/http would. Never the headers: they
// carry the authorization.
func (s *Server) recoverPanic(method, path string) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	s.logger.Printf("panic serving %s %s: %v (the connection was closed; this is an emulator bug, please report it)\n%s", method, path, v, debug.Stack())
	panic(http.ErrAbortHandler)
}
