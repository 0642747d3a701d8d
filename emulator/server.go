package emulator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/emulator/rntbdserver"
)

// Server is a running emulated account.
type Server struct {
	cfg      Config
	key      *cosmos.MasterKey
	store    *store
	reps     *replicaRegistry
	faults   *faults.Injector
	clock    faults.Clock
	started  time.Time
	global   *endpoint
	regions  []*endpoint
	writeIdx atomic.Int32 // index of the current write region (single-write accounts)
	// replLag is the configured replication lag in nanoseconds; store.lag is what the
	// consistency level makes of it (consistency.go visibilityLag).
	replLag atomic.Int64
	order   atomic.Pointer[[]int]
	closing chan struct{}
	closeMu sync.Once
	wg      sync.WaitGroup

	logger *log.Logger
	// version is Options.Version, for hello.
	version string
	// results caches the sorted and aggregated results that query pages read
	// (querycache.go).
	results *resultCache
	// bodyTimeout is Options.BodyTimeout with its default.
	bodyTimeout   time.Duration
	testServeHook func(*http.Request)
	// enforce turns on throttling by provisioned throughput, which draws on the
	// ranges' RU budgets (throughput.go).
	enforce atomic.Bool
	budgets throughputMeter
	// tls and certPEM are the listeners' TLS configuration and the certificate they
	// serve; both nil for plain http (tls.go).
	tls     *tls.Config
	certPEM []byte
	// rntbdTLS is the RNTBD listeners' TLS, and rntbdCertPEM its certificate when it is
	// not the https one (rntbd.go); replicaHTTP counts HTTP requests to replica paths.
	rntbdTLS     *tls.Config
	rntbdCertPEM []byte
	replicaHTTP  atomic.Int64
	// reshape holds the scenario's splits and merges still to come (reshape.go).
	reshape reshapes
}

// endpoint is one listening port: the global endpoint or one region's.
type endpoint struct {
	// region is the region the endpoint serves: -1 for the global endpoint, which
	// answers as the write region, unless the account's one region is served on it
	// (RegionConfig.GlobalEndpoint).
	region   int
	global   bool
	name     string
	url      string
	listener *faultListener
	http     *http.Server
	// rntbd serves the region's replicas over RNTBD on rntbdListener, at rntbdURL
	// (rntbd://host:port); nil on the global endpoint unless it serves the region.
	rntbd         *rntbdserver.Server
	rntbdListener *faultListener
	rntbdURL      string
	// thin serves the region's Gateway 2.0 endpoint on thinListener, at thinURL
	// (https://host:port, thinclient.go).
	thin         *http.Server
	thinListener *faultListener
	thinURL      string
}

// Region describes one region of a running emulator.
type Region struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	Write    bool   `json:"write"`
	// Replicas is the region's RNTBD listener (rntbd://host:port), where every replica
	// of the region is served (rntbd.go).
	Replicas string `json:"replicas,omitempty"`
	// ThinClient is the region's Gateway 2.0 endpoint (https://host:port/).
	ThinClient string `json:"thin_client,omitempty"`
}

// ListenError is Start's error when an endpoint cannot listen on its port. Its message
// names the flag of `cosmosctl emulator`; callers with other flags say it their own way.
type ListenError struct {
	What string // "global endpoint", "region West US"
	Addr string // host:port
	Err  error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("%s cannot listen on %s: %v (choose another --port, or 0 for free ports)", e.What, e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// Options are the parts of a start that cannot come from a scenario file.
type Options struct {
	// Clock drives replication lag, fault time windows and replica moves; nil is the
	// wall clock.
	Clock faults.Clock
	// Log receives handler panics and server errors, rate-limited; nil is os.Stderr.
	Log io.Writer
	// BodyTimeout bounds how long a request body may take to arrive once the emulator
	// starts reading it; 0 is DefaultBodyTimeout. Tests shorten it.
	BodyTimeout time.Duration
	// Notices receives what a start has to tell about the data file, such as records it
	// could not read and skipped; nil is os.Stderr.
	Notices io.Writer
	// DataLockWait bounds the wait for another process to release the data file of
	// Config.DataDir; 0 is DefaultDataLockWait. A caller that looks for the holder in
	// between attempts waits less.
	DataLockWait time.Duration

	// Version is the version of the program serving the emulator, which hello
	// reports (see hello.go); "" reports "dev".
	Version string

	// testServeHook, when set, runs first for every request (tests make it panic).
	testServeHook func(*http.Request)
}

// Start binds every listener and serves until Close. On error nothing is left running.
func Start(cfg Config, opts Options) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	key, err := cosmos.NewMasterKey(cfg.Key)
	if err != nil {
		return nil, err
	}
	clock := opts.Clock
	if clock == nil {
		clock = faults.ClockFunc(time.Now)
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	s := &Server{cfg: cfg, key: key, clock: clock, started: clock.Now(), closing: make(chan struct{}), reps: newReplicaRegistry(), results: newResultCache()}
	logTo := opts.Log
	if logTo == nil {
		logTo = os.Stderr
	}
	// Rate limiting is about a terminal flooding in real time, so it uses the wall clock.
	s.logger = newServerLog(logTo, time.Now).logger()
	s.bodyTimeout, s.testServeHook, s.version = opts.BodyTimeout, opts.testServeHook, opts.Version
	s.enforce.Store(cfg.EnforceThroughput)
	if s.bodyTimeout <= 0 {
		s.bodyTimeout = DefaultBodyTimeout
	}
	if err := s.checkReshapeRules(&cfg); err != nil {
		return nil, fmt.Errorf("scenario: %v", err)
	}
	s.faults = faults.NewInjector(clock, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), s.started)
	if err := s.faults.Load(cfg.Latency, cfg.Faults); err != nil {
		return nil, fmt.Errorf("scenario: %v", err)
	}
	var d *disk
	if cfg.DataDir != "" {
		if d, err = openDisk(cfg.DataDir, opts.DataLockWait); err != nil {
			return nil, err
		}
	}
	s.store = newStore(cfg.Ranges, clock, d)
	s.replLag.Store(int64(cfg.ReplicationLag))
	s.store.lag.Store(int64(s.visibilityLag(time.Duration(cfg.ReplicationLag))))
	if cfg.Consistency == levelBounded {
		s.store.maxStale = cfg.MaxStalenessPrefix
	}
	if d != nil {
		if err := d.load(s.store, opts.Notices); err != nil {
			d.close()
			return nil, fmt.Errorf("loading %s: %v (move the file away to start empty)", cfg.DataDir, err)
		}
	}
	for _, db := range cfg.Databases {
		for _, co := range db.Containers {
			def, _ := partitionKeyDefinition(co.PartitionKey)
			if err := s.store.ensureContainer(db.ID, co.ID, def); err != nil {
				s.closeDisk()
				return nil, fmt.Errorf("creating %s/%s: %v", db.ID, co.ID, err)
			}
		}
		if len(db.Containers) == 0 && s.store.database(db.ID) == nil {
			if _, err := s.store.createDatabase(db.ID); err != nil {
				s.closeDisk()
				return nil, err
			}
		}
	}
	if cfg.TLS {
		if s.tls, s.certPEM, err = serverTLS(cfg, clock.Now()); err != nil {
			s.closeDisk()
			return nil, err
		}
	}
	if err := s.rntbdTLSConfig(); err != nil {
		s.closeDisk()
		return nil, err
	}
	order := make([]int, len(cfg.Regions))
	for i := range order {
		order[i] = i
	}
	s.order.Store(&order)

	if err := s.listen(); err != nil {
		s.Close()
		return nil, err
	}
	// Replica addresses carry the regional ports, so replicas exist once bound.
	if err := s.prepareReplicas(); err != nil {
		for _, ep := range s.endpoints() {
			ep.listener.Close() // not serving yet, so Shutdown would not close it
		}
		for _, ep := range s.regionEndpoints() {
			ep.rntbdListener.Close()
			ep.rntbd = nil
			ep.thinListener.Close()
			ep.thin = nil
		}
		s.Close()
		return nil, fmt.Errorf("scenario: %v", err)
	}
	for _, ep := range s.endpoints() {
		s.wg.Add(1)
		go func(ep *endpoint) {
			defer s.wg.Done()
			var ln net.Listener = ep.listener
			if s.tls != nil {
				ln = tls.NewListener(ln, s.tls)
			}
			if err := ep.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.logger.Printf("the %s endpoint stopped serving: %v", ep.name, err)
			}
		}(ep)
	}
	for _, ep := range s.regionEndpoints() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveRNTBD(ep)
		}()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveThinClient(ep)
		}()
	}
	return s, nil
}

func (s *Server) listen() error {
	bind := func(port int, region int, name string) (*endpoint, error) {
		ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Host, strconv.Itoa(port)))
		if err != nil {
			what := "global endpoint"
			if region >= 0 {
				what = "region " + name
			}
			return nil, &ListenError{What: what, Addr: net.JoinHostPort(s.cfg.Host, strconv.Itoa(port)), Err: err}
		}
		ep := &endpoint{region: region, global: region < 0, name: name}
		// The global endpoint answers as the write region (a real account's global DNS
		// name resolves to it), so a refuse fault on that region drops its requests too;
		// but it keeps accepting connections, because it also serves the control API,
		// which must stay reachable to end the outage it is rehearsing.
		ep.listener = &faultListener{Listener: ln, refusing: func() bool { return region >= 0 && s.faults.Refusing(name) }}
		scheme := "http://"
		if s.tls != nil {
			scheme = "https://"
		}
		ep.url = scheme + ln.Addr().String()
		// No ReadTimeout: it would also end requests that a fault holds (hang, long
		// delays) by cancelling their context; readBody bounds the body instead.
		ep.http = &http.Server{
			Handler:           lowercaseHeaders(&handler{s: s, ep: ep}),
			ReadHeaderTimeout: 30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          s.logger,
			ConnState:         ep.listener.track,
		}
		return ep, nil
	}
	var err error
	if s.global, err = bind(s.cfg.Port, -1, "global"); err != nil {
		return err
	}
	for i, r := range s.cfg.Regions {
		if r.GlobalEndpoint {
			// Microsoft's emulator has one region, whose endpoint is the global one
			// (its account lists https://127.0.0.1:8081/ for it): requests there are
			// that region's, replica addresses included.
			s.global.region, s.global.name = i, r.Name
			s.regions = append(s.regions, s.global)
			continue
		}
		ep, err := bind(r.Port, i, r.Name)
		if err != nil {
			return err
		}
		s.regions = append(s.regions, ep)
	}
	for _, ep := range s.regionEndpoints() {
		if err := s.bindRNTBD(ep); err != nil {
			return err
		}
		if err := s.bindThinClient(ep); err != nil {
			return err
		}
	}
	return nil
}

// Close stops every listener, ends hanging requests and closes the store.
func (s *Server) Close() error {
	var err error
	s.closeMu.Do(func() {
		close(s.closing)
		// In-flight requests get up to 500 ms to finish. Shutdown stops the listeners
		// and closes idle connections, but it would also wait for connections a client
		// opened and never used (Go counts them idle only after 5 s): once no request
		// is being served, every endpoint is closed outright instead.
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		eps := s.endpoints()
		var shut sync.WaitGroup
		for _, ep := range s.regionEndpoints() {
			if ep.rntbd == nil {
				if ep.rntbdListener != nil {
					ep.rntbdListener.Close()
				}
				continue
			}
			shut.Add(1)
			go func() {
				defer shut.Done()
				ep.rntbd.Close()
			}()
			if ep.thin != nil {
				shut.Add(1)
				go func() {
					defer shut.Done()
					if e := ep.thin.Shutdown(ctx); e != nil {
						ep.thin.Close()
					}
				}()
			}
		}
		for _, ep := range eps {
			shut.Add(1)
			go func() {
				defer shut.Done()
				if e := ep.http.Shutdown(ctx); e != nil && !errors.Is(e, http.ErrServerClosed) {
					ep.http.Close()
				}
			}()
		}
		drained := func() bool {
			for _, ep := range eps {
				if ep.listener.serving() {
					return false
				}
			}
			return true
		}
		for !drained() && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Millisecond):
			}
		}
		cancel()
		shut.Wait()
		s.wg.Wait()
		err = s.closeDisk()
	})
	return err
}

// endpoints lists every endpoint once: the global one, then the regions' own (a region
// served on the global endpoint has none).
func (s *Server) endpoints() []*endpoint {
	var eps []*endpoint
	if s.global != nil {
		eps = append(eps, s.global)
	}
	for _, ep := range s.regions {
		if ep != nil && ep != s.global {
			eps = append(eps, ep)
		}
	}
	return eps
}

func (s *Server) closeDisk() error {
	if s.store != nil && s.store.disk != nil {
		return s.store.disk.close()
	}
	return nil
}

// Endpoint is the global endpoint URL.
func (s *Server) Endpoint() string { return s.global.url }

// Key is the account key that requests must be signed with.
func (s *Server) Key() string { return s.cfg.Key }

// UsesWellKnownKey reports whether the key is the public emulator key (and so safe to print).
func (s *Server) UsesWellKnownKey() bool { return s.cfg.Key == cosmos.EmulatorKey }

// Faults gives tests and the control API the injector.
func (s *Server) Faults() *faults.Injector { return s.faults }

// Regions lists the regions in failover priority order.
func (s *Server) Regions() []Region {
	order := *s.order.Load()
	out := make([]Region, 0, len(order))
	for _, i := range order {
		out = append(out, Region{Name: s.regions[i].name, Endpoint: s.regions[i].url, Write: s.writable(i), Replicas: s.regions[i].rntbdURL, ThinClient: s.regions[i].thinURL + "/"})
	}
	return out
}

// RegionEndpoint returns the URL of a region by name.
func (s *Server) RegionEndpoint(name string) (string, bool) {
	if i, ok := s.regionIndex(name); ok {
		return s.regions[i].url, true
	}
	return "", false
}

func (s *Server) regionIndex(name string) (int, bool) {
	for i, r := range s.regions {
		if cosmos.SameRegion(r.name, name) {
			return i, true
		}
	}
	return 0, false
}

func (s *Server) writable(region int) bool {
	return s.cfg.MultiWrite || int(s.writeIdx.Load()) == region
}

// Failover makes region the write region. Writes sent to the old write region are then
// refused with 403/3, which tells SDKs to re-read the account and follow.
func (s *Server) Failover(region string) error {
	i, ok := s.regionIndex(region)
	if !ok {
		return fmt.Errorf("no region %q; regions are %s", region, s.regionNames())
	}
	s.writeIdx.Store(int32(i))
	old := *s.order.Load()
	order := []int{i}
	for _, j := range old {
		if j != i {
			order = append(order, j)
		}
	}
	s.order.Store(&order)
	return nil
}

// lagNow is how long a write takes to become visible in the other regions: the
// replication lag as the account's consistency level lets it be (consistency.go).
func (s *Server) lagNow() time.Duration { return time.Duration(s.store.lag.Load()) }

// configuredLag is the replication lag as configured (--replication-lag or the control
// API), before the consistency level bounds it.
func (s *Server) configuredLag() time.Duration { return time.Duration(s.replLag.Load()) }

// SetReplicationLag changes how long writes take to reach the other regions.
func (s *Server) SetReplicationLag(d time.Duration) error {
	if d < 0 {
		return errors.New("replication lag must not be negative")
	}
	s.replLag.Store(int64(d))
	s.store.lag.Store(int64(s.visibilityLag(d)))
	return nil
}

func (s *Server) regionNames() string {
	names := ""
	for i, r := range s.regions {
		if i > 0 {
			names += ", "
		}
		names += strconv.Quote(r.name)
	}
	return names
}

// Account is the body of GET /.
func (s *Server) Account() cosmos.Account {
	a := cosmos.Account{
		ID: s.cfg.Account, RID: s.cfg.Account + ".documents.azure.com", Self: "", Media: "//media/",
		Addresses: "//addresses/", Dbs: "//dbs/",
		EnableMultipleWriteLocations: s.cfg.MultiWrite,
		UserReplicationPolicy:        cosmos.ReplicationPolicy{AsyncReplication: false, MinReplicaSetSize: min(3, s.cfg.Replicas), MaxReplicasetSize: s.cfg.Replicas},
		SystemReplicationPolicy:      cosmos.ReplicationPolicy{AsyncReplication: false, MinReplicaSetSize: min(3, s.cfg.Replicas), MaxReplicasetSize: s.cfg.Replicas},
		UserConsistencyPolicy:        s.consistencyPolicy(),
		ReadPolicy:                   cosmos.ReadPolicy{PrimaryReadCoefficient: 1, SecondaryReadCoefficient: 1},
		QueryEngineConfiguration:     queryEngineConfiguration(),
	}
	for _, i := range *s.order.Load() {
		loc := cosmos.Location{Name: s.regions[i].name, Endpoint: s.regions[i].url + "/"}
		if s.writable(i) {
			a.WritableLocations = append(a.WritableLocations, loc)
		}
		a.ReadableLocations = append(a.ReadableLocations, loc)
	}
	return a
}
