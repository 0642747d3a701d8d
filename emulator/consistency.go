package emulator

import (
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// The account's consistency level decides what a read in a region can see of the
// writes made elsewhere. The emulator replicates a write to the other regions after
// replication_lag (store.go: visibleIn, caughtUpLSN), and each level changes that as
// the service does:
//
//   - Strong: "a write operation is considered committed when all regions acknowledge
//     the record has been replicated" (Microsoft Learn, "Consistency levels in Azure
//     Cosmos DB", https://learn.microsoft.com/en-us/azure/cosmos-db/consistency-levels,
//     "Strong consistency" and "Dynamic quorum"). The emulator makes a write visible in
//     every region when it commits and holds its acknowledgement for the replication
//     lag (strongCommitWait), so the write latency includes the replication, as on the
//     service, and no read after the acknowledgement is stale. The dynamic quorum (a
//     slow region dropped from the quorum) is not modelled.
//   - BoundedStaleness: reads in other regions lag by at most K versions or T seconds.
//     The emulator clamps the replication lag to T (visibilityLag) and makes a
//     partition's oldest writes visible once more than K of them are in flight
//     (partition.recordCommit): the bound always holds. The service instead throttles
//     writes to a partition whose lag exceeds the bound ("writes for that partition are
//     throttled until staleness is back within the configured upper bound", same page);
//     the emulator does not.
//   - Session: a read with a session token this region has not caught up with is a
//     404/1002 (items.go sessionSatisfied).
//   - ConsistentPrefix and Eventual: a region serves what it has received, in commit
//     order; a session token is not waited for. The replica layer does the same: a read
//     at a level other than Session reads any replica without looking at the session
//     token (azure-sdk-for-java ConsistencyReader.readAsync: ReadMode.Any runs
//     readSessionAsync only for Session, readAnyAsync otherwise). Eventual is served as
//     ConsistentPrefix, a stronger guarantee the service allows.
const (
	levelStrong   = cosmos.ConsistencyStrong
	levelBounded  = cosmos.ConsistencyBoundedStaleness
	levelSession  = cosmos.ConsistencySession
	levelPrefix   = cosmos.ConsistencyConsistentPrefix
	levelEventual = cosmos.ConsistencyEventual
)

// consistencyAllowed checks a document request's x-ms-consistency-level. A level
// stronger than the account's is the service's 400: "ConsistencyLevel Strong specified
// in the request is invalid when service is configured with consistency level Session.
// Ensure the request consistency level is not stronger than the service consistency
// level." (the service's answer to the Go SDK, which does not check, quoted with its
// BadRequest code by a Dapr state store walkthrough; the same text is the .NET SDK's
// RMResources.InvalidConsistencyLevel and the Java SDK's check). The service's answer
// to a value that is no level at all is not documented: the emulator refuses it with a
// 400 naming the levels.
func (s *Server) consistencyAllowed(req *request) bool {
	raw := strings.TrimSpace(req.r.Header.Get(cosmos.HeaderConsistencyLevel))
	if raw == "" || !documentOp(req.op) {
		return true
	}
	level, ok := serviceLevel(raw)
	if !ok {
		s.writeError(req, badRequest("the x-ms-consistency-level header %s is not a consistency level: send Strong, BoundedStaleness, Session, ConsistentPrefix or Eventual", quote(raw)), 0)
		return false
	}
	if !cosmos.ConsistencyAllowed(s.cfg.Consistency, level) {
		s.writeError(req, badRequest("ConsistencyLevel %s specified in the request is invalid when service is configured with consistency level %s. Ensure the request consistency level is not stronger than the service consistency level.", level, s.cfg.Consistency), 0)
		return false
	}
	return true
}

// serviceLevel spells a request's consistency level as the service does; only the
// service's own names are levels on the wire.
func serviceLevel(raw string) (string, bool) {
	for _, l := range []string{levelStrong, levelBounded, levelSession, levelPrefix, levelEventual} {
		if strings.EqualFold(raw, l) {
			return l, true
		}
	}
	return "", false
}

func quote(s string) string { return `"` + truncateString(s, 40) + `"` }

// documentOp reports the operations on documents, the ones a consistency level applies to.
func documentOp(op string) bool {
	switch op {
	case faults.OpRead, faults.OpQuery, faults.OpCreate, faults.OpUpsert, faults.OpReplace, faults.OpDelete, faults.OpPatch:
		return true
	}
	return false
}

func writeOp(op string) bool { return documentOp(op) && op != faults.OpRead && op != faults.OpQuery }

// readLevel is the level a read is served at: the request's, which may only relax the
// account's (consistencyAllowed), else the account's.
func (s *Server) readLevel(req *request) string {
	if level, ok := serviceLevel(strings.TrimSpace(req.r.Header.Get(cosmos.HeaderConsistencyLevel))); ok {
		return level
	}
	return s.cfg.Consistency
}

// visibilityLag is how long a write takes to become visible in the other regions at
// the account's level, given the configured replication lag.
func (s *Server) visibilityLag(configured time.Duration) time.Duration {
	switch s.cfg.Consistency {
	case levelStrong:
		return 0
	case levelBounded:
		return min(configured, time.Duration(s.cfg.MaxIntervalSeconds)*time.Second)
	}
	return configured
}

// strongCommitWait holds the acknowledgement of a successful write on a Strong account
// of several regions for the replication lag: the write is already visible everywhere
// (visibilityLag is 0), and the service acknowledges it only once every region has it,
// so its latency includes the trip to the farthest region. Like the latency model,
// the wait is real time. false: the client went away or the server is closing.
func (s *Server) strongCommitWait(req *request, status int) bool {
	if s.cfg.Consistency != levelStrong || len(s.regions) < 2 || status >= 400 || !writeOp(req.op) {
		return true
	}
	lag := s.configuredLag()
	if lag <= 0 {
		return true
	}
	return s.wait(req.r.Context(), lag)
}

// consistencyPolicy is the account document's userConsistencyPolicy: the level, and the
// staleness bounds, which the service reports at every level (100 versions and 5
// seconds unless the account is BoundedStaleness with bounds of its own).
func (s *Server) consistencyPolicy() cosmos.ConsistencyPolicy {
	p := cosmos.ConsistencyPolicy{DefaultConsistencyLevel: s.cfg.Consistency,
		MaxStalenessPrefix: defaultStalenessPrefixOne, MaxIntervalInSeconds: defaultIntervalSecondsOne}
	if s.cfg.Consistency == levelBounded {
		p.MaxStalenessPrefix, p.MaxIntervalInSeconds = s.cfg.MaxStalenessPrefix, s.cfg.MaxIntervalSeconds
	}
	return p
}
