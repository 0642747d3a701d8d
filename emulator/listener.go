package emulator

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
)

// faultListener accepts connections for one endpoint, resetting them at once while a
// "refuse" fault covers the region: to a client that is a region that is down. It also
// tracks open connections so that a region going down cuts its idle keep-alive
// connections too, as a real outage would.
type faultListener struct {
	net.Listener
	refusing func() bool
	mu       sync.Mutex
	conns    map[net.Conn]http.ConnState
}

func (l *faultListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.refusing() {
			reset(c)
			continue
		}
		return c, nil
	}
}

func (l *faultListener) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns == nil {
		l.conns = map[net.Conn]http.ConnState{}
	}
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	default:
		l.conns[c] = st
	}
}

// serving reports whether a connection is serving a request now.
func (l *faultListener) serving() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, st := range l.conns {
		if st == http.StateActive {
			return true
		}
	}
	return false
}

// dropIdle resets every tracked connection that is not the one serving the caller.
func (l *faultListener) dropAll(except net.Conn) {
	l.mu.Lock()
	conns := make([]net.Conn, 0, len(l.conns))
	for c := range l.conns {
		if c != except {
			conns = append(conns, c)
		}
	}
	l.mu.Unlock()
	for _, c := range conns {
		reset(c)
	}
}

// reset closes a connection with an RST rather than a FIN, so the client sees
// "connection reset" at once instead of a clean end of stream.
func reset(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn() // no close_notify: the point is an abrupt end
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
