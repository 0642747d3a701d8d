package addrcache

import (
	"fmt"
	"time"
)

// Health is what the client has observed of one replica, as the SDKs record it.
type Health int

const (
	// Unknown: the address came from the gateway and no request has answered from it yet.
	Unknown Health = iota
	// Connected: the replica answered.
	Connected
	// UnhealthyPending: the replica had failed, and a refresh returned it again. The SDKs
	// try it again, but only after the replicas known to answer.
	UnhealthyPending
	// Unhealthy: the replica answered 410, refused the connection or hung.
	Unhealthy
)

func (h Health) String() string {
	switch h {
	case Unknown:
		return "unknown"
	case Connected:
		return "connected"
	case UnhealthyPending:
		return "unhealthy-pending"
	case Unhealthy:
		return "unhealthy"
	}
	return fmt.Sprintf("health(%d)", int(h))
}

// Replica is one address of a replica set as Replicas hands it out.
type Replica struct {
	URL     string
	Primary bool
	// Health is the recorded state. An UnhealthyPending or Unhealthy state older than
	// Options.UnhealthyFor no longer affects the order, but is still reported as such
	// until a success or a refresh changes it.
	Health Health
	// Since is when the replica entered this state.
	Since time.Time
}

// Buckets of the order, tried first to last.
const (
	tryFirst = iota
	tryAfterGood
	tryLast
)

// bucket places a replica in the order. It matches the SDKs' effective health: a state
// that says "avoid" is believed for unhealthyFor only, after which the replica counts as
// Connected again, so that a failed refresh or a flapping gateway never leaves the
// account on three of its four replicas for longer than that (the throughput risk the
// .NET change accepted only for at most one minute).
func bucket(h Health, since, now time.Time, unhealthyFor time.Duration) int {
	expired := now.Sub(since) >= unhealthyFor
	switch {
	case h == UnhealthyPending && !expired:
		return tryAfterGood
	case h == Unhealthy && !expired:
		return tryLast
	}
	return tryFirst
}
