package output

import (
	"io"
	"strings"

	"github.com/cosmosctl/cosmosctl/workload"
)

// Replica roles and the health states of `probe --replicas` (the address cache's states,
// see addrcache.Health).
const (
	RolePrimary   = "primary"
	RoleSecondary = "secondary"

	healthUnhealthy        = "unhealthy"
	healthUnhealthyPending = "unhealthy-pending"
)

// ProbeReplica is one replica's row of `probe --replicas`: a replica of the probe item's
// partition key range in one region, and what its requests got. In JSON it is an element
// of the summary's replicas array, with its region; the field names are an API.
type ProbeReplica struct {
	Region  string `json:"region"`
	Range   string `json:"partition_key_range"`
	Address string `json:"address"`
	Role    string `json:"role"` // primary or secondary
	// Health is the replica's state in the client's address cache after its last answer:
	// unknown, connected, unhealthy-pending or unhealthy.
	Health string `json:"health"`
	// InReplicaSet is false once an address refresh has dropped the replica from the
	// cached set (it moved, and the gateway hands out its successor): it is probed no more.
	InReplicaSet bool `json:"in_replica_set"`
	workload.Summary
}

// WriteProbeReplicas writes the per-replica table of `cosmosctl probe --replicas`: REGION,
// RANGE, REPLICA (its address), ROLE, HEALTH, then the columns of the region table. On a
// narrow terminal the address is the first to give way, to the replica's id (the last
// part of the address, unique in its partition; cut at its start if need be, since ids
// differ in their last digits); the range goes with the request charge (one probe
// item: one range per region), the role with the p99.9 (the id ends in p for the
// primary, s for a secondary); the server and network columns, when shown, are hidden
// before either.
func WriteProbeReplicas(w io.Writer, st Styles, replicas []ProbeReplica) error {
	cols := []Column{
		{Header: "REGION", Key: true, Priority: 9, Min: 10},
		{Header: "RANGE", Priority: 1},
		{Header: "REPLICA", Key: true, Priority: 9, Abbrev: replicaID, Min: 10, KeepEnd: true},
		{Header: "ROLE", Priority: 2},
		{Header: "HEALTH", Key: true, Priority: 8, Min: 9},
	}
	server := false
	for _, r := range replicas {
		server = server || r.Summary.HasServerTime()
	}
	t := NewTableOf(w, st, append(cols, summaryColumns(server)...)...)
	for _, r := range replicas {
		health := r.Health
		if !r.InReplicaSet {
			health += " (removed)"
		}
		switch r.Health {
		case healthUnhealthy:
			health = st.Bad(health)
		case healthUnhealthyPending:
			health = st.Warn(health)
		}
		t.Append(append([]string{r.Region, r.Range, r.Address, r.Role, health}, summaryCells(st, r.Summary, server)...)...)
	}
	return t.Render()
}

// replicaID is the last part of a replica's address: "9p" of
// "rntbd://host:port/apps/…/partitions/2/replicas/9p/".
func replicaID(address string) string {
	trimmed := strings.TrimRight(address, "/")
	i := strings.LastIndexByte(trimmed, '/')
	if i < 0 || i == len(trimmed)-1 {
		return address
	}
	return trimmed[i+1:]
}

// NewProbeReplicaBreach describes a replica's breach of r: the breach of its region, with
// the replica's address in the message and in its own field.
func NewProbeReplicaBreach(region, address string, r workload.Rule, s workload.Summary) ProbeBreach {
	b := NewProbeBreach(region+" replica "+address, r, s)
	b.Region, b.Replica = region, address
	return b
}
