package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
)

// DatabaseInfo is one database as `db ls` and `db show` print it.
type DatabaseInfo struct {
	ID         string          `json:"id"`
	RID        string          `json:"rid"`
	Throughput *ThroughputInfo `json:"throughput"`
}

// ContainerInfo is one container as `container ls` and `container show` print it.
// The fields that only show reads (ranges, throughput) are nil from ls.
type ContainerInfo struct {
	ID                  string     `json:"id"`
	Database            string     `json:"database"`
	RID                 string     `json:"rid"`
	PartitionKeyPaths   []string   `json:"partition_key_paths"`
	PartitionKeyKind    string     `json:"partition_key_kind"`
	PartitionKeyVersion int        `json:"partition_key_version"`
	Indexing            string     `json:"indexing_policy"`
	DefaultTTLSeconds   *int       `json:"default_ttl_seconds"`
	UniqueKeys          [][]string `json:"unique_keys"`
	ConflictResolution  string     `json:"conflict_resolution"`
	// PartitionKeyRanges and Throughput are null from container ls, which does not
	// read them.
	PartitionKeyRanges *int            `json:"partition_key_ranges"`
	Throughput         *ThroughputInfo `json:"throughput"`
}

// ThroughputInfo is a database's or container's offer. Mode is "manual" or
// "autoscale"; "shared" (a container using its database's throughput) and "none" (a
// database without throughput of its own) have no offer. MinRUPerSecond is what the
// service says it may be lowered to (0 when it does not say).
type ThroughputInfo struct {
	Resource           string
	Mode               string
	OfferID            string
	RUPerSecond        int
	AutoscaleMaxRU     int
	MinRUPerSecond     int
	ReplacePending     bool
	IncrementPercent   int
	MaxEverRUPerSecond int
}

// ThroughputJSON is a ThroughputInfo as JSON: what the offer does not say, or a mode
// without an offer does not have, is null.
type ThroughputJSON struct {
	// Resource is what the offer is of: "database NAME" or "container NAME".
	Resource string `json:"resource"`
	// Mode is manual, autoscale, shared (the database's) or none.
	Mode                          string  `json:"mode"`
	OfferID                       *string `json:"offer_id"`
	RUPerSecond                   *int    `json:"ru_per_second"`
	AutoscaleMaxRUPerSecond       *int    `json:"autoscale_max_ru_per_second"`
	MinRUPerSecond                *int    `json:"min_ru_per_second"`
	ReplacePending                bool    `json:"replace_pending"`
	AutoscaleIncrementPercent     *int    `json:"autoscale_increment_percent"`
	MaxRUPerSecondEverProvisioned *int    `json:"max_ru_per_second_ever_provisioned"`
}

// MarshalJSON writes the throughput as ThroughputJSON.
func (t ThroughputInfo) MarshalJSON() ([]byte, error) {
	offer := t.Mode == "manual" || t.Mode == "autoscale"
	nonZero := func(n int) *int {
		if n == 0 {
			return nil
		}
		return &n
	}
	j := ThroughputJSON{Resource: t.Resource, Mode: t.Mode, ReplacePending: t.ReplacePending,
		AutoscaleMaxRUPerSecond: nonZero(t.AutoscaleMaxRU), MinRUPerSecond: nonZero(t.MinRUPerSecond),
		AutoscaleIncrementPercent: nonZero(t.IncrementPercent), MaxRUPerSecondEverProvisioned: nonZero(t.MaxEverRUPerSecond)}
	if t.OfferID != "" {
		id := t.OfferID
		j.OfferID = &id
	}
	if offer {
		ru := t.RUPerSecond
		j.RUPerSecond = &ru
	}
	return jsonenc.Marshal(j)
}

// JSONSchemaAlias is the type the throughput's JSON schema is generated from.
func (ThroughputInfo) JSONSchemaAlias() any { return ThroughputJSON{} }

// UnmarshalJSON reads a throughput written by MarshalJSON.
func (t *ThroughputInfo) UnmarshalJSON(b []byte) error {
	var j ThroughputJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	val := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	*t = ThroughputInfo{Resource: j.Resource, Mode: j.Mode, RUPerSecond: val(j.RUPerSecond), AutoscaleMaxRU: val(j.AutoscaleMaxRUPerSecond),
		MinRUPerSecond: val(j.MinRUPerSecond), ReplacePending: j.ReplacePending, IncrementPercent: val(j.AutoscaleIncrementPercent),
		MaxEverRUPerSecond: val(j.MaxRUPerSecondEverProvisioned)}
	if j.OfferID != nil {
		t.OfferID = *j.OfferID
	}
	return nil
}

// Summary is the throughput in one cell: "400 RU/s", "autoscale 400–4000 RU/s".
func (t *ThroughputInfo) Summary() string {
	switch {
	case t == nil:
		return "-"
	case t.Mode == "autoscale":
		s := fmt.Sprintf("autoscale %d–%d RU/s", t.AutoscaleMaxRU/10, t.AutoscaleMaxRU)
		if t.ReplacePending {
			s += " (replace pending)"
		}
		return s
	case t.Mode == "manual":
		s := fmt.Sprintf("%d RU/s", t.RUPerSecond)
		if t.ReplacePending {
			s += " (replace pending)"
		}
		return s
	}
	return t.Mode
}

// WriteDatabases is the `db ls` table.
func WriteDatabases(w io.Writer, st Styles, dbs []DatabaseInfo) error {
	t := NewTableOf(w, st, Column{Header: "DATABASE", Key: true}, Column{Header: "THROUGHPUT", Priority: 1}, Column{Header: "RID", Priority: 2})
	for _, d := range dbs {
		t.Append(d.ID, d.Throughput.Summary(), d.RID)
	}
	return t.Render()
}

// WriteContainers is the `container ls` table.
func WriteContainers(w io.Writer, st Styles, cs []ContainerInfo) error {
	t := NewTableOf(w, st, Column{Header: "CONTAINER", Key: true}, Column{Header: "PARTITION KEY", Priority: 3},
		Column{Header: "DEFAULT TTL", Priority: 1}, Column{Header: "RID", Priority: 2})
	for _, c := range cs {
		t.Append(c.ID, strings.Join(c.PartitionKeyPaths, ","), ttlText(c.DefaultTTLSeconds), c.RID)
	}
	return t.Render()
}

// WriteContainer is the `container show` table: one property a row.
func WriteContainer(w io.Writer, st Styles, c ContainerInfo) error {
	t := NewTableOf(w, st, Column{Header: "PROPERTY", Key: true}, Column{Header: "VALUE", Priority: 1, Min: 10})
	t.Append("container", c.ID)
	t.Append("database", c.Database)
	t.Append("partition key", fmt.Sprintf("%s (%s, version %d)", strings.Join(c.PartitionKeyPaths, ","), c.PartitionKeyKind, c.PartitionKeyVersion))
	t.Append("indexing policy", c.Indexing)
	t.Append("default TTL", ttlText(c.DefaultTTLSeconds))
	uk := "none"
	if len(c.UniqueKeys) > 0 {
		parts := make([]string, len(c.UniqueKeys))
		for i, k := range c.UniqueKeys {
			parts[i] = "(" + strings.Join(k, ",") + ")"
		}
		uk = strings.Join(parts, " ")
	}
	t.Append("unique keys", uk)
	t.Append("conflict resolution", c.ConflictResolution)
	if c.PartitionKeyRanges != nil {
		t.Append("partition key ranges", strconv.Itoa(*c.PartitionKeyRanges))
	}
	t.Append("throughput", c.Throughput.Summary())
	t.Append("rid", c.RID)
	return t.Render()
}

// WriteThroughput is the `throughput show` and `throughput set` table.
func WriteThroughput(w io.Writer, st Styles, tp ThroughputInfo) error {
	t := NewTableOf(w, st, Column{Header: "PROPERTY", Key: true}, Column{Header: "VALUE", Priority: 1, Min: 10})
	t.Append("resource", tp.Resource)
	t.Append("mode", tp.Mode)
	if tp.Mode == "manual" || tp.Mode == "autoscale" {
		t.Append("RU/s now", strconv.Itoa(tp.RUPerSecond))
		if tp.Mode == "autoscale" {
			t.Append("autoscale range", fmt.Sprintf("%d–%d RU/s", tp.AutoscaleMaxRU/10, tp.AutoscaleMaxRU))
		}
		minRU := "not reported"
		if tp.MinRUPerSecond > 0 {
			minRU = fmt.Sprintf("%d RU/s", tp.MinRUPerSecond)
		}
		t.Append("minimum", minRU)
		t.Append("replace pending", strconv.FormatBool(tp.ReplacePending))
		t.Append("offer", tp.OfferID)
	}
	return t.Render()
}

func ttlText(ttl *int) string {
	switch {
	case ttl == nil:
		return "off"
	case *ttl == -1:
		return "on (no default expiry)"
	}
	return fmt.Sprintf("%ds", *ttl)
}
