package rntbdserver

import (
	"bufio"
	"bytes"
	"errors"
	"log"
	"net"
	"net/http"
	"time"
)

// Recorded is a handler's answer as Record captured it.
type Recorded struct {
	Status int
	Header http.Header
	Body   []byte
	// Aborted: the handler dropped the connection (hijacked and closed it, or panicked
	// with http.ErrAbortHandler): no answer is to be sent.
	Aborted bool
}

// Record runs h for r and captures its answer. A handler that hijacks the connection
// gets one whose Close calls abort (the emulator's "refuse" effect closes the RNTBD
// connection that way).
func Record(h http.Handler, r *http.Request, abort func(), logger *log.Logger) (rec Recorded) {
	w := &recorder{header: http.Header{}, abort: abort}
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler && logger != nil {
				logger.Printf("rntbdserver: handler panic serving %s %s: %v", r.Method, r.URL.Path, p)
			}
			rec = Recorded{Aborted: true}
		}
	}()
	h.ServeHTTP(w, r)
	if w.hijacked {
		return Recorded{Aborted: true}
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return Recorded{Status: w.status, Header: w.header, Body: w.body.Bytes()}
}

type recorder struct {
	header   http.Header
	status   int
	body     bytes.Buffer
	hijacked bool
	abort    func()
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

func (w *recorder) Flush() {}

// Hijack hands out the connection to be dropped: its Close aborts the RNTBD connection.
func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	w.hijacked = true
	hc := &hijackedConn{abort: w.abort}
	return hc, bufio.NewReadWriter(bufio.NewReader(hc), bufio.NewWriter(hc)), nil
}

// hijackedConn stands for the RNTBD connection: reads and writes fail, Close aborts it.
type hijackedConn struct{ abort func() }

var errHijacked = errors.New("rntbdserver: the RNTBD connection carries frames, not HTTP")

func (c *hijackedConn) Read([]byte) (int, error)         { return 0, errHijacked }
func (c *hijackedConn) Write([]byte) (int, error)        { return 0, errHijacked }
func (c *hijackedConn) Close() error                     { c.abort(); return nil }
func (c *hijackedConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *hijackedConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *hijackedConn) SetDeadline(time.Time) error      { return nil }
func (c *hijackedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *hijackedConn) SetWriteDeadline(time.Time) error { return nil }
