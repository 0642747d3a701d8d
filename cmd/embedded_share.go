package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

// The embedded emulator's persistent data is shared by every command that uses it.
//
// One process at a time can open a data directory: the emulator's data file is locked
// while it is open (flock, LockFileEx on Windows), and the OS releases the lock when the
// process ends, however it ends. So the process that opens the data serves it on
// loopback ports for as long as it runs, and says so in a record next to the data,
// <data dir>/serving.json. A command that finds the data locked reads the record, checks
// that the server it names answers, and sends its requests there. `cosmosctl emulator
// --data-dir DIR` writes the same record, so data commands attach to the data it serves
// too, when its key is the public one (the record holds no other).
//
// Only the holder of the data file's lock writes or removes the record: it writes it
// once it serves and removes it before it lets go of the lock. A record is therefore the
// holder's, or one left by a process that died, which nobody answers for and the next
// holder replaces. Two commands starting at once are decided by the lock: the one that
// gets it serves, the other attaches when the record appears.
//
// When the process serving the data ends while an attached command still runs, the
// attached command's next request finds the ports closed (connection refused: nothing
// was sent), and the command takes over: it opens the data itself on the same ports, so
// the account topology the engine learned stays right and the request goes on. A
// request in flight at that moment fails as on any lost connection, and the engine
// treats it so. When the data cannot be taken over (a standalone emulator, whose
// configuration a data command does not know, served it; its ports are taken; another
// command took it over on other ports) the requests fail with one line that says what
// happened and what to do, printed once on stderr as well.

const (
	servingRecordName   = "serving.json"
	servingRecordFormat = 1
	// dataLockPoll is how long one attempt waits for the data file's lock before the
	// record is looked at again.
	dataLockPoll = 100 * time.Millisecond
)

var (
	// embeddedAttachWait bounds how long a command waits, while another process holds
	// the data, for a record of it that answers. The holder writes its record a few
	// milliseconds after it gets the lock; a holder that never does is an older
	// cosmosctl or a stuck process, and the command gives up with a line saying so.
	embeddedAttachWait = 10 * time.Second
	// servingCheckTimeout bounds the check that a recorded server answers.
	servingCheckTimeout = 2 * time.Second
)

// servingRecord is the content of <data dir>/serving.json: who serves the data, where.
type servingRecord struct {
	Format int `json:"format"`
	PID    int `json:"pid"`
	// Command is what serves it, such as "cosmosctl probe" or "cosmosctl emulator".
	Command string `json:"command"`
	// Embedded says that it is served with the embedded emulator's configuration, so
	// that a data command can serve it the same way when the server ends.
	Embedded bool              `json:"embedded"`
	Endpoint string            `json:"endpoint"`
	Regions  []emulator.Region `json:"regions"`
	// Key is there only when it is the well-known emulator key, which is public.
	Key string `json:"key,omitempty"`
	// Certificate is the server's certificate (PEM, no key), which its RNTBD replicas
	// and Gateway 2.0 endpoints present: a process attached to it trusts it for those.
	Certificate string    `json:"certificate,omitempty"`
	DataDir     string    `json:"data_dir"`
	StartedAt   time.Time `json:"started_at"`
	Version     string    `json:"version"`
	// Stopped is set by the server as it stops, still holding the data: the ports stay
	// on record for the next server, and a request it lost on the way was not applied.
	Stopped bool `json:"stopped,omitempty"`
}

func servingRecordPath(dir string) string { return filepath.Join(dir, servingRecordName) }

// newServingRecord describes srv, serving dir for command in this process; endpoint
// and regions are as a client on this machine reaches them.
func newServingRecord(srv *emulator.Server, dir, command string, embedded bool, endpoint string, regions []emulator.Region) servingRecord {
	rec := servingRecord{Format: servingRecordFormat, PID: os.Getpid(), Command: command, Embedded: embedded,
		Endpoint: endpoint, Regions: regions, DataDir: dir, StartedAt: time.Now().UTC(), Version: thisBuild().Version,
		Certificate: string(srv.CertificatePEM())}
	if srv.UsesWellKnownKey() {
		rec.Key = srv.Key()
	}
	return rec
}

// readServingRecord reads the record in dir; false when there is none that this
// cosmosctl can use (missing, damaged, another format).
func readServingRecord(dir string) (servingRecord, bool) {
	var rec servingRecord
	f, err := os.Open(servingRecordPath(dir))
	if err != nil {
		return rec, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<16))
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return servingRecord{}, false
	}
	if rec.Format != servingRecordFormat || rec.PID <= 0 || rec.Endpoint == "" {
		return servingRecord{}, false
	}
	return rec, true
}

// writeServingRecord replaces the record in dir atomically: a reader sees the old one
// or the new one, never half of one.
func writeServingRecord(dir string, rec servingRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return statefile.WriteFile(servingRecordPath(dir), append(b, '\n'))
}

// markStopped records that rec's server stops, if the record in dir is still rec: the
// server calls it before it stops serving and lets go of the data file's lock.
func markStopped(dir string, rec servingRecord) {
	if cur, ok := readServingRecord(dir); ok && cur.PID == rec.PID && cur.Endpoint == rec.Endpoint {
		rec.Stopped = true
		if writeServingRecord(dir, rec) != nil {
			os.Remove(servingRecordPath(dir))
		}
	}
}

// who names the process of a record for a person: "cosmosctl probe (pid 1234)".
func (r servingRecord) who() string {
	cmd := r.Command
	if cmd == "" {
		cmd = "cosmosctl"
	}
	return fmt.Sprintf("%s (pid %d)", cmd, r.PID)
}

type servingStatus int

const (
	notServed    servingStatus = iota // nobody answers for the record: it is stale
	servedHere                        // its server answers, and serves the data in dir
	servedOwnKey                      // a server with a key of its own listens there
)

// status checks, within servingCheckTimeout, that the record's server answers and is
// the one that serves dir (a stale record's port may have been reused).
func (r servingRecord) status(ctx context.Context, dir string) servingStatus {
	if r.Stopped || !processAlive(r.PID) {
		return notServed
	}
	ctx, cancel := context.WithTimeout(ctx, servingCheckTimeout)
	defer cancel()
	if r.Key == "" {
		// Without the key nothing can be asked: a port that the recorded process, alive,
		// listens on is taken as its.
		u, err := url.Parse(r.Endpoint)
		if err != nil {
			return notServed
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return notServed
		}
		c.Close()
		return servedOwnKey
	}
	cl, err := emulator.NewControlClient(r.Endpoint, r.Key)
	if err != nil {
		return notServed
	}
	defer cl.Transport.CloseIdleConnections()
	st, err := cl.State(ctx)
	if err != nil || st.PID != r.PID || !sameDir(st.DataDir, dir) {
		return notServed
	}
	return servedHere
}

// sameDir reports whether a and b name one directory, symbolic links and all.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// embeddedUnavailableError is the embedded emulator's data out of this command's reach:
// held by a process that does not serve it, or served by one that stopped. A later
// run may succeed, so it is an unavailability (exit 8).
type embeddedUnavailableError struct{ msg string }

func (e *embeddedUnavailableError) Error() string { return e.msg }

// embeddedData is the embedded emulator's persistent data as one command uses it:
// served by this process, or by another that it attached to.
type embeddedData struct {
	dir     string // absolute
	command string // this command, for the record it writes when it serves
	notices io.Writer

	mu  sync.Mutex
	srv *emulator.Server // set while this process serves the data
	rec servingRecord    // who serves it: this process, or the one attached to
	// down is why requests cannot reach the data any more, once they cannot: every
	// request then fails with it.
	down error
}

// openEmbeddedData serves the embedded emulator's data in dir from this process, or,
// when another process serves it, attaches to that one. Starting at once with others,
// it serves if it gets the data file first and attaches otherwise.
func openEmbeddedData(ctx context.Context, dir, command string, notices io.Writer) (*embeddedData, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("the embedded emulator's data directory %s: %v", dir, err)
	}
	d := &embeddedData{dir: abs, command: command, notices: notices}
	deadline := time.Now().Add(embeddedAttachWait)
	for {
		rec, found := readServingRecord(d.dir)
		if found {
			switch rec.status(ctx, d.dir) {
			case servedHere:
				d.rec = rec
				return d, nil
			case servedOwnKey:
				return nil, &embeddedUnavailableError{fmt.Sprintf("the embedded emulator's data in %s is served by %s at %s with a key of its own: "+
					"use it with --endpoint %s and its key (COSMOSCTL_KEY or --key-file), or use --ephemeral, or set COSMOSCTL_EMULATOR_DATA to another directory",
					d.dir, rec.who(), rec.Endpoint, rec.Endpoint)}
			}
		}
		// The record of an embedded server that stopped or died: its ports first, so that
		// commands still attached to that server carry on against this one.
		var prefer *servingRecord
		if found && rec.Embedded {
			prefer = &rec
		}
		err := d.serve(prefer, true)
		var inUse *emulator.DataInUseError
		switch {
		case err == nil:
			return d, nil
		case !errors.As(err, &inUse):
			return nil, err
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case time.Now().After(deadline):
			return nil, d.busy(rec, found)
		}
	}
}

// busy is the error for data that another process holds and does not serve.
func (d *embeddedData) busy(rec servingRecord, found bool) error {
	if found && !rec.Stopped && processAlive(rec.PID) {
		return &embeddedUnavailableError{fmt.Sprintf("the embedded emulator's data in %s is held by %s, which does not answer at %s: "+
			"let it finish or end it (a job stopped with Ctrl-Z resumes with fg), or use --ephemeral, or set COSMOSCTL_EMULATOR_DATA to another directory",
			d.dir, rec.who(), rec.Endpoint)}
	}
	return &embeddedUnavailableError{fmt.Sprintf("the embedded emulator's data in %s is in use by another process that does not serve it to other commands (an older cosmosctl?): "+
		"let it finish or end it, or use --ephemeral, or set COSMOSCTL_EMULATOR_DATA to another directory", d.dir)}
}

// serve opens the data and serves it from this process, on the ports of prefer if it is
// set and they are free (else on free ports, if fallback), and records that it does.
// Called with d.mu held or before d is shared.
func (d *embeddedData) serve(prefer *servingRecord, fallback bool) error {
	opts := emulator.Options{DataLockWait: dataLockPoll, Notices: d.notices}
	cfg := embeddedConfig()
	cfg.DataDir = d.dir
	for again := true; ; again = false {
		srv, err := d.start(cfg, opts, prefer, fallback)
		if err != nil {
			return err
		}
		// Holding the data file, this process is the only one that changes the record:
		// if the last server left one with other ports than those chosen before the lock
		// was had (it stopped while this one waited), serve on its ports instead, so that
		// the commands still attached to it carry on.
		if rec, ok := readServingRecord(d.dir); again && ok && rec.Embedded && rec.PID != os.Getpid() &&
			(prefer == nil || !samePorts(rec, *prefer)) && !samePorts(rec, servingRecord{Endpoint: srv.Endpoint(), Regions: srv.Regions()}) {
			srv.Close()
			prefer = &rec
			continue
		}
		d.srv = srv
		d.rec = newServingRecord(srv, d.dir, d.command, true, srv.Endpoint(), srv.Regions())
		if err := writeServingRecord(d.dir, d.rec); err != nil {
			fmt.Fprintf(d.notices, "cosmosctl: other commands cannot use the embedded emulator while this one runs: %v\n", err)
		}
		return nil
	}
}

// start starts the emulator on the ports of prefer, if it is set and they are free,
// else on free ports if fallback.
func (d *embeddedData) start(cfg emulator.Config, opts emulator.Options, prefer *servingRecord, fallback bool) (*emulator.Server, error) {
	if prefer != nil {
		if same, ok := withPortsOf(cfg, *prefer); ok {
			srv, err := emulator.Start(same, opts)
			var inUse *emulator.DataInUseError
			if err == nil || errors.As(err, &inUse) || !fallback {
				return srv, err
			}
		}
	}
	if !fallback {
		return nil, fmt.Errorf("the ports of %s are unknown", prefer.Endpoint)
	}
	return emulator.Start(cfg, opts)
}

// withPortsOf is cfg on the ports that rec records for the embedded emulator's regions.
func withPortsOf(cfg emulator.Config, rec servingRecord) (emulator.Config, bool) {
	port := func(raw string) (int, bool) {
		u, err := url.Parse(raw)
		if err != nil {
			return 0, false
		}
		p, err := strconv.Atoi(u.Port())
		return p, err == nil && p > 0
	}
	global, ok := port(rec.Endpoint)
	if !ok {
		return cfg, false
	}
	cfg.Port = global
	cfg.Regions = nil
	for _, name := range emulator.DefaultRegions {
		found := false
		for _, r := range rec.Regions {
			if p, ok := port(r.Endpoint); ok && cosmos.SameRegion(r.Name, name) {
				cfg.Regions = append(cfg.Regions, emulator.RegionConfig{Name: name, Port: p})
				found = true
				break
			}
		}
		if !found {
			return cfg, false
		}
	}
	return cfg, true
}

// attached reports whether another process serves the data (at the start).
func (d *embeddedData) attached() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.srv == nil
}

func (d *embeddedData) endpoint() string { return d.rec.Endpoint }

// clientTLS trusts the certificate of the server of the data: this process's, or the
// one on record of the process attached to. A server that takes the data over later
// has a certificate of its own, which this session does not trust: its direct-mode
// connections fail, and the next command trusts the new one.
func (d *embeddedData) clientTLS() *tls.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv != nil {
		return d.srv.ClientTLSConfig()
	}
	pool := x509.NewCertPool()
	if d.rec.Certificate == "" || !pool.AppendCertsFromPEM([]byte(d.rec.Certificate)) {
		return nil
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}
func (d *embeddedData) key() string { return d.rec.Key }

// Close stops serving the data if this process does, recording that first.
func (d *embeddedData) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv != nil {
		markStopped(d.dir, d.rec)
		d.srv.Close()
		d.srv = nil
	}
	if d.down == nil {
		d.down = errors.New("the session is closed")
	}
}

// serves reports whether host (host:port) is one of the recorded server's endpoints.
func (d *embeddedData) serves(host string) bool {
	d.mu.Lock()
	rec := d.rec
	d.mu.Unlock()
	for _, raw := range append([]string{rec.Endpoint}, regionEndpoints(rec.Regions)...) {
		if u, err := url.Parse(raw); err == nil && u.Host == host {
			return true
		}
	}
	return false
}

func regionEndpoints(rs []emulator.Region) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Endpoint
	}
	return out
}

// takeOver is what a request to the server that this command attached to does when it
// got no answer from it: retry says to send it again, now that this process (or another
// one, on the same ports) serves the data; an error says why nobody can.
//
// A request is sent again only when it cannot have been applied: its connection was
// refused (nothing was sent), or the server recorded that it stopped, which it does
// before it stops serving (a server stopping cuts only requests it has not begun to
// apply: those its latency still held, those on a connection it was closing). A
// request lost while the server is still on record, as one killed leaves it, may have
// been applied: the engine decides, as for any lost connection, and the next request,
// refused, takes the data over.
func (d *embeddedData) takeOver(notSent bool) (retry bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down != nil {
		return false, d.down
	}
	if d.srv != nil {
		return true, nil // another request took it over
	}
	// The request's context may be about to end; the take-over is the command's and is
	// bounded on its own.
	ctx := context.Background()
	old := d.rec
	// A server that stopped as it should is succeeded quietly: that is how commands
	// share the data. One that is gone without a word (killed, crashed) is reported.
	gone := ""
	if cur, ok := readServingRecord(d.dir); ok && cur.PID == old.PID && cur.Endpoint == old.Endpoint && !cur.Stopped {
		if !notSent || old.status(ctx, d.dir) == servedHere {
			return false, nil
		}
		gone = fmt.Sprintf("cosmosctl: %s, which served the embedded emulator, is gone; ", old.who())
	}
	fail := func(format string, args ...any) (bool, error) {
		d.down = &embeddedUnavailableError{fmt.Sprintf(format, args...)}
		fmt.Fprintf(d.notices, "cosmosctl: %v\n", d.down)
		return false, d.down
	}
	deadline := time.Now().Add(embeddedAttachWait)
	for {
		if rec, ok := readServingRecord(d.dir); ok && rec.PID != old.PID && rec.status(ctx, d.dir) == servedHere {
			if samePorts(rec, old) {
				d.rec = rec
				if gone != "" {
					fmt.Fprintf(d.notices, "%s%s serves its data now\n", gone, rec.who())
				}
				return true, nil
			}
			return fail("%s, which served the embedded emulator's data, stopped, and %s serves it now on other ports: run the command again", old.who(), rec.who())
		}
		if !old.Embedded {
			return fail("%s, which served the embedded emulator's data in %s, stopped: start it again, or run the command again to use the data without it", old.who(), d.dir)
		}
		err := d.serve(&old, false)
		var inUse *emulator.DataInUseError
		var taken *emulator.ListenError
		switch {
		case err == nil:
			if gone != "" {
				fmt.Fprintf(d.notices, "%sthis command serves its data now\n", gone)
			}
			return true, nil
		case errors.As(err, &taken):
			return fail("%s, which served the embedded emulator, stopped, and this command cannot serve its data on the same ports (%s is taken now): run the command again", old.who(), taken.Addr)
		case !errors.As(err, &inUse):
			return fail("%s, which served the embedded emulator, stopped, and this command cannot serve its data (%v): run the command again", old.who(), err)
		case time.Now().After(deadline):
			return fail("%s, which served the embedded emulator, stopped, and another process holds its data in %s without serving it: run the command again when that one ends, or use --ephemeral, or set COSMOSCTL_EMULATOR_DATA to another directory", old.who(), d.dir)
		}
	}
}

// samePorts reports whether two records serve on the same endpoints.
func samePorts(a, b servingRecord) bool {
	if a.Endpoint != b.Endpoint || len(a.Regions) != len(b.Regions) {
		return false
	}
	for i := range a.Regions {
		if a.Regions[i].Endpoint != b.Regions[i].Endpoint {
			return false
		}
	}
	return true
}

// client wraps the HTTP client of an attached command's engine so that a request its
// server does not answer may take the data over and be sent again (takeOver).
func (d *embeddedData) client(c *http.Client) *http.Client {
	wrapped := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	wrapped.Transport = &takeOverTransport{base: base, data: d}
	return &wrapped
}

// maxTakeOvers bounds how often one request follows the data to its next server: a
// burst of short commands hands it on every few milliseconds.
const maxTakeOvers = 8

type takeOverTransport struct {
	base http.RoundTripper
	data *embeddedData
}

func (t *takeOverTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body := req.GetBody
	send := req
	for range maxTakeOvers {
		resp, err := t.base.RoundTrip(send)
		if err == nil || req.Context().Err() != nil || !t.data.serves(req.URL.Host) {
			return resp, err
		}
		retry, terr := t.data.takeOver(refused(err))
		if terr != nil {
			return nil, terr
		}
		if !retry {
			return nil, err
		}
		// Pooled connections to the ports are the old server's, and dead.
		t.CloseIdleConnections()
		send = req.Clone(req.Context())
		if req.Body != nil && req.Body != http.NoBody {
			if body == nil {
				return nil, err
			}
			if send.Body, terr = body(); terr != nil {
				return nil, err
			}
		}
	}
	return t.base.RoundTrip(send)
}

func (t *takeOverTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// refused reports a connection that could not be made: nothing of the request was sent.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// checkDataDirFree makes cfg.DataDir absolute (it is recorded, and reported by the
// control API, for other processes) and refuses at once a directory that another
// process serves, naming it, rather than after waiting for its lock.
func checkDataDirFree(ctx context.Context, cfg *emulator.Config) error {
	if cfg.DataDir == "" {
		return nil
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return usageErrorf("--data-dir %s: %v", cfg.DataDir, err)
	}
	cfg.DataDir = abs
	if rec, ok := readServingRecord(abs); ok && rec.status(ctx, abs) != notServed {
		return usageErrorf("the data directory %s is in use: %s serves it at %s; stop it, or choose another --data-dir", abs, rec.who(), rec.Endpoint)
	}
	return nil
}

// dataDirInUse names who holds the data directory when Start found it locked, if a
// record says.
func dataDirInUse(cfg emulator.Config, err error) error {
	var inUse *emulator.DataInUseError
	if !errors.As(err, &inUse) {
		return err
	}
	if rec, ok := readServingRecord(cfg.DataDir); ok && processAlive(rec.PID) {
		return fmt.Errorf("the data directory %s is in use by %s (serving it at %s); stop it, or choose another --data-dir", cfg.DataDir, rec.who(), rec.Endpoint)
	}
	return err
}
