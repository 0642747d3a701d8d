package emulator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// The control API changes a running emulator: faults, latencies, the write region and
// the replication lag. It lives on the global endpoint under /_emulator/ and requests
// are signed with the account key like any other, so nobody without the key can turn a
// rehearsal into an outage. The one exception is hello (hello.go), which needs no key
// and tells no secret.
//
//	GET    /_emulator/hello            Hello, on every endpoint, signed or not
//	GET    /_emulator/state            State
//	GET    /_emulator/faults           the fault rules, with how often each fired
//	POST   /_emulator/faults           add a rule (faults.Rule as JSON; after and for count
//	                                   from now) → the rule with its id and since
//	DELETE /_emulator/faults           remove every rule
//	DELETE /_emulator/faults/{id}      remove one rule
//	GET    /_emulator/latency          the latency table
//	PUT    /_emulator/latency          set a latency (faults.LatencySpec as JSON) → the table
//	POST   /_emulator/failover         {"region": "West US"}: make it the write region
//	PUT    /_emulator/replication      {"lag": "2s"}
//	PUT    /_emulator/throughput       {"enforce": true}: throttle by provisioned
//	                                   throughput (429/3200, throughput.go) → State
//	GET    /_emulator/replicas         every replica set: addresses, states, request counts
//	GET    /_emulator/replica-moves    the replica moves, with their state
//	POST   /_emulator/replica-moves    move a replica (ReplicaMove as JSON; after counts
//	                                   from now) → the move (ReplicaMoveStatus)
//	POST   /_emulator/splits           split a partition key range (SplitRequest), its
//	                                   documents moved to the two new ranges → RangeChange
//	POST   /_emulator/merges           merge two adjacent ranges (MergeRequest) → RangeChange
//
// A fault rule's replica field names a replica as "<range id>:<replica id>", e.g. "0:7"
// (GET /_emulator/replicas lists the names); such a rule applies only to requests sent
// to that replica's address.

// State is the body of GET /_emulator/state.
type State struct {
	Account        string          `json:"account"`
	Endpoint       string          `json:"endpoint"`
	Regions        []Region        `json:"regions"`
	MultiWrite     bool            `json:"multi_write"`
	ReplicationLag faults.Duration `json:"replication_lag"`
	Persistent     bool            `json:"persistent"`
	// DataDir is where a persistent emulator keeps its data, as it was given.
	DataDir string `json:"data_dir,omitempty"`
	// PID is the process serving the emulator: with DataDir it tells a process that
	// found a record of who serves a data directory that the answer is from that one.
	PID          int                   `json:"pid"`
	Latency      []faults.LatencyEntry `json:"latency"`
	Faults       []faults.Rule         `json:"faults"`
	Uptime       faults.Duration       `json:"uptime"`
	ReplicaMoves []ReplicaMoveStatus   `json:"replica_moves,omitempty"`
	// EnforceThroughput says item operations are throttled by provisioned throughput;
	// Throttled counts the 429/3200s that has answered (fault rules' 429s not included).
	EnforceThroughput bool  `json:"enforce_throughput"`
	Throttled         int64 `json:"throttled"`
	// MergeEnabled says requests must declare the merge capability (reshape.go).
	MergeEnabled bool `json:"merge_enabled"`
}

// FailoverRequest and ReplicationRequest are control API bodies.
type FailoverRequest struct {
	Region string `json:"region"`
}

type ReplicationRequest struct {
	Lag faults.Duration `json:"lag"`
}

// State reports the emulator's current configuration.
func (s *Server) State() State {
	return State{
		Account: s.cfg.Account, Endpoint: s.Endpoint(), Regions: s.Regions(), MultiWrite: s.cfg.MultiWrite,
		ReplicationLag: faults.Duration(s.configuredLag()), Persistent: s.store.disk != nil,
		DataDir: s.cfg.DataDir, PID: os.Getpid(),
		Latency: s.faults.Latency(), Faults: s.faults.Rules(),
		Uptime:            faults.Duration(s.clock.Now().Sub(s.started).Round(time.Millisecond)),
		ReplicaMoves:      s.ReplicaMoves(),
		EnforceThroughput: s.enforce.Load(), Throttled: s.budgets.refusals.Load(),
		MergeEnabled: s.cfg.MergeEnabled,
	}
}

func (s *Server) serveControl(req *request) {
	segs := req.segs[1:]
	r := req.r
	route := r.Method + " "
	if len(segs) > 0 {
		route += segs[0]
	}
	switch {
	case route == "GET state":
		s.controlJSON(req, http.StatusOK, s.State())
	case route == "GET faults":
		s.controlJSON(req, http.StatusOK, s.faults.Rules())
	case route == "POST faults":
		var rule faults.Rule
		if !s.decodeJSON(req, &rule) {
			return
		}
		if rule.Region != "" {
			if _, ok := s.regionIndex(rule.Region); !ok {
				s.writeError(req, badRequest("fault region %q is not a region of this account; regions are %s", rule.Region, s.regionNames()), 0)
				return
			}
		}
		if err := s.checkReplicaName(rule.Replica); err != nil {
			s.writeError(req, badRequest("%v", err), 0)
			return
		}
		added, err := s.faults.Add(rule)
		if err != nil {
			s.writeError(req, badRequest("%v", err), 0)
			return
		}
		if added.Effect == faults.EffectRefuse {
			s.dropRefusedConnections()
		}
		s.controlJSON(req, http.StatusCreated, added)
	case route == "DELETE faults" && len(segs) == 1:
		s.faults.Clear()
		s.writeJSON(req, http.StatusNoContent, nil, 0)
	case route == "DELETE faults" && len(segs) == 2:
		if !s.faults.Remove(segs[1]) {
			s.writeError(req, notFound("no fault with id "+segs[1]), 0)
			return
		}
		s.writeJSON(req, http.StatusNoContent, nil, 0)
	case route == "GET latency":
		s.controlJSON(req, http.StatusOK, s.faults.Latency())
	case route == "PUT latency":
		var spec faults.LatencySpec
		if !s.decodeJSON(req, &spec) {
			return
		}
		if spec.Region != "" {
			if _, ok := s.regionIndex(spec.Region); !ok {
				s.writeError(req, badRequest("latency region %q is not a region of this account; regions are %s", spec.Region, s.regionNames()), 0)
				return
			}
		}
		if err := s.faults.SetLatency(spec.Region, spec.Operation, spec.Distribution); err != nil {
			s.writeError(req, badRequest("%v", err), 0)
			return
		}
		s.controlJSON(req, http.StatusOK, s.faults.Latency())
	case route == "POST failover":
		var in FailoverRequest
		if !s.decodeJSON(req, &in) {
			return
		}
		if err := s.Failover(in.Region); err != nil {
			s.writeError(req, badRequest("%v", err), 0)
			return
		}
		s.controlJSON(req, http.StatusOK, s.Account())
	case route == "PUT replication":
		var in ReplicationRequest
		if !s.decodeJSON(req, &in) {
			return
		}
		if err := s.SetReplicationLag(time.Duration(in.Lag)); err != nil {
			s.writeError(req, badRequest("%v", err), 0)
			return
		}
		s.controlJSON(req, http.StatusOK, s.State())
	case route == "PUT throughput" && len(segs) == 1:
		body, ok := s.readBody(req)
		if !ok {
			return
		}
		var in struct {
			Enforce *bool `json:"enforce"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil || in.Enforce == nil {
			s.writeError(req, badRequest(`throughput: the body must be {"enforce": true} or {"enforce": false}`), 0)
			return
		}
		s.SetEnforceThroughput(*in.Enforce)
		s.controlJSON(req, http.StatusOK, s.State())
	case route == "GET replicas" && len(segs) == 1:
		s.controlJSON(req, http.StatusOK, s.Replicas())
	case route == "GET replica-moves" && len(segs) == 1:
		s.controlJSON(req, http.StatusOK, s.ReplicaMoves())
	case route == "POST replica-moves" && len(segs) == 1:
		body, ok := s.readBody(req)
		if !ok {
			return
		}
		var m ReplicaMove
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			s.writeError(req, badRequest("replica move: the body is not a replica move: %v (fields: region, database, container, range, replica, primary, effect, after, refresh_delay)", err), 0)
			return
		}
		st, err := s.MoveReplica(m)
		if err != nil {
			s.writeError(req, badRequest("%v", err), 0)
			return
		}
		s.controlJSON(req, http.StatusCreated, st)
	case route == "POST splits" && len(segs) == 1:
		var in SplitRequest
		if !s.decodeStrict(req, &in, "split: the body is not a split (fields: database, container, range, at)") {
			return
		}
		s.answerRangeChange(req, func() (RangeChange, error) { return s.SplitRange(in) })
	case route == "POST merges" && len(segs) == 1:
		var in MergeRequest
		if !s.decodeStrict(req, &in, "merge: the body is not a merge (fields: database, container, ranges)") {
			return
		}
		s.answerRangeChange(req, func() (RangeChange, error) { return s.MergeRanges(in) })
	default:
		s.writeError(req, notFound("no control API route "+r.Method+" "+r.URL.Path+" (see `cosmosctl emulator --help`)"), 0)
	}
}

func (s *Server) controlJSON(req *request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.writeError(req, cosmosErr(500, 0, err.Error()), 0)
		return
	}
	s.writeJSON(req, status, body, 0)
}

// dropRefusedConnections cuts the open connections of regions that a refuse rule now
// covers, so clients with pooled connections see the outage at once.
func (s *Server) dropRefusedConnections() {
	for _, ep := range s.regions {
		// The global endpoint keeps its connections, even when it serves the region:
		// the control API that ends the outage is served there.
		if ep.global {
			continue
		}
		if s.faults.Refusing(ep.name) {
			ep.listener.dropAll(nil)
			if ep.rntbd != nil {
				ep.rntbd.CloseConnections()
			}
		}
	}
}

// AddFault adds a fault rule to a running emulator (for tests and embedding). Like a
// rule added through the control API, its After and For count from now; only the rules
// of the scenario (Config.Faults) count from the emulator's start.
func (s *Server) AddFault(r faults.Rule) (faults.Rule, error) {
	if r.Region != "" {
		if _, ok := s.regionIndex(r.Region); !ok {
			return r, &cosmos.Error{StatusCode: 400, Message: "unknown region " + r.Region}
		}
	}
	if err := s.checkReplicaName(r.Replica); err != nil {
		return r, &cosmos.Error{StatusCode: 400, Message: err.Error()}
	}
	added, err := s.faults.Add(r)
	if err == nil && added.Effect == faults.EffectRefuse {
		s.dropRefusedConnections()
	}
	return added, err
}

// decodeStrict reads a control API body into v, refusing unknown fields with a 400
// that starts with what.
func (s *Server) decodeStrict(req *request, v any, what string) bool {
	body, ok := s.readBody(req)
	if !ok {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		s.writeError(req, badRequest("%s: %v", what, err), 0)
		return false
	}
	return true
}

// answerRangeChange answers a split or merge: 201 with what changed, 404 for a missing
// database or container, 400 for anything else refused.
func (s *Server) answerRangeChange(req *request, do func() (RangeChange, error)) {
	ch, err := do()
	if ce, ok := err.(*cosmos.Error); ok {
		s.writeError(req, ce, 0)
		return
	}
	if err != nil {
		s.writeError(req, badRequest("%v", err), 0)
		return
	}
	s.controlJSON(req, http.StatusCreated, ch)
}
