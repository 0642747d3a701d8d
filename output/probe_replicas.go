package output

import (
	"io"

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
// of the summary's replicas section, under its region; the field names are an API.
type ProbeReplica struct {
	Region  string `json:"-"`
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
// RANGE, REPLICA (its address), ROLE, HEALTH, then the columns of the region table.
func WriteProbeReplicas(w io.Writer, st Styles, replicas []ProbeReplica) error {
	t := NewTable(w, st, "REGION", "RANGE", "REPLICA", "ROLE", "HEALTH", "COUNT", "ERRORS", "P50", "P90", "P99", "P99.9", "MAX", "RU")
	t.AlignRight(5, 7, 8, 9, 10, 11, 12)
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
		t.Append(append([]string{r.Region, r.Range, r.Address, r.Role, health}, summaryCells(st, r.Summary)...)...)
	}
	return t.Render()
}

// NewProbeReplicaBreach describes a replica's breach of r: the breach of its region, with
// the replica's address in the message and in its own field.
func NewProbeReplicaBreach(region, address string, r workload.Rule, s workload.Summary) ProbeBreach {
	b := NewProbeBreach(region+" replica "+address, r, s)
	b.Region, b.Replica = region, address
	return b
}
