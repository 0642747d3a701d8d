package cmd

import (
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// The emulator commands' JSON, in cosmosctl's vocabulary (docs/json/README.md): a region
// is "region", durations are milliseconds with _ms in the name, times are *_at, and what
// is not set is null. The emulator's control API keeps its own wire format (durations
// as Go duration strings, as in scenario files); these types are what a script reads.

// emulatorRegionJSON is one region of an emulator.
type emulatorRegionJSON struct {
	Region   string `json:"region"`
	Endpoint string `json:"endpoint"`
	Write    bool   `json:"write"`
	// Replicas is the region's RNTBD listener (rntbd://host:port), serving every
	// replica of the region in direct mode; ThinClient its Gateway 2.0 endpoint.
	Replicas   string `json:"replicas,omitempty"`
	ThinClient string `json:"thin_client,omitempty"`
}

func emulatorRegionsJSON(regions []emulator.Region) []emulatorRegionJSON {
	out := make([]emulatorRegionJSON, len(regions))
	for i, r := range regions {
		out[i] = emulatorRegionJSON{Region: r.Name, Endpoint: r.Endpoint, Write: r.Write, Replicas: r.Replicas, ThinClient: r.ThinClient}
	}
	return out
}

// distributionJSON is a latency distribution: fixed (value_ms), uniform (min_ms and
// max_ms) or lognormal (p50_ms and p99_ms); the figures of the other kinds are null.
type distributionJSON struct {
	Kind    string   `json:"kind"`
	ValueMs *float64 `json:"value_ms"`
	MinMs   *float64 `json:"min_ms"`
	MaxMs   *float64 `json:"max_ms"`
	P50Ms   *float64 `json:"p50_ms"`
	P99Ms   *float64 `json:"p99_ms"`
}

func distributionOf(d faults.Distribution) distributionJSON {
	kind := d.Kind
	if kind == "" {
		kind = faults.KindNone
	}
	out := distributionJSON{Kind: kind}
	switch kind {
	case faults.KindFixed:
		out.ValueMs = durationMs(d.Value)
	case faults.KindUniform:
		out.MinMs, out.MaxMs = durationMs(d.Min), durationMs(d.Max)
	case faults.KindLognormal:
		out.P50Ms, out.P99Ms = durationMs(d.P50), durationMs(d.P99)
	}
	return out
}

func durationMs(d faults.Duration) *float64 {
	v := msOf(time.Duration(d))
	return &v
}

// durationMsOrNull is durationMs, null for 0 (not set).
func durationMsOrNull(d faults.Duration) *float64 {
	if d == 0 {
		return nil
	}
	return durationMs(d)
}

// latencyJSON is one latency setting: a region's (null: every region's) operation.
type latencyJSON struct {
	Region *string `json:"region"`
	// Operation is an operation or a group (reads, writes, all).
	Operation    string           `json:"operation"`
	Distribution distributionJSON `json:"distribution"`
}

func latencyTableJSON(entries []faults.LatencyEntry) []latencyJSON {
	out := make([]latencyJSON, 0, len(entries))
	for _, l := range entries {
		out = append(out, latencyJSON{Region: stringOrNull(l.Region), Operation: orAll(l.Operation), Distribution: distributionOf(l.Distribution)})
	}
	return out
}

// faultJSON is one fault rule: where and when it applies (null: no restriction), what it
// does, and how often it fired.
type faultJSON struct {
	ID     string  `json:"id"`
	Region *string `json:"region"`
	// Operations are the operations and groups it matches; null for every one.
	Operations []string `json:"operations" jsonschema:"nullable"`
	Replica    *string  `json:"replica"`
	// Probability is the chance a matching request is hit (1: every one).
	Probability float64 `json:"probability"`
	// Count is how many times it fires before it stops; null for no limit.
	Count *int `json:"count"`
	// ActiveFromAt and ActiveUntilAt are its window in the emulator's clock; null for
	// open (active until removed).
	ActiveFromAt  *time.Time `json:"active_from_at"`
	ActiveUntilAt *time.Time `json:"active_until_at"`
	// Effect is delay, status, hang, refuse or drop-response; Delay, StatusCode,
	// SubStatus and RetryAfterMs are the effect's, null for the other effects.
	Effect       string            `json:"effect"`
	Delay        *distributionJSON `json:"delay"`
	StatusCode   *int              `json:"status_code"`
	SubStatus    *int              `json:"substatus"`
	RetryAfterMs *float64          `json:"retry_after_ms"`
	Fired        int               `json:"fired"`
}

func faultsJSON(rules []faults.Rule) []faultJSON {
	out := make([]faultJSON, 0, len(rules))
	for _, r := range rules {
		out = append(out, faultOf(r))
	}
	return out
}

func faultOf(r faults.Rule) faultJSON {
	f := faultJSON{ID: r.ID, Region: stringOrNull(r.Region), Operations: r.Operations, Replica: stringOrNull(r.Replica),
		Probability: r.Probability, Effect: r.Effect, Fired: r.Fired}
	if f.Probability == 0 {
		f.Probability = 1
	}
	if r.Count > 0 {
		n := r.Count
		f.Count = &n
	}
	if !r.Since.IsZero() {
		from := r.Since.Add(time.Duration(r.After)).UTC()
		f.ActiveFromAt = &from
		if r.For > 0 {
			until := from.Add(time.Duration(r.For))
			f.ActiveUntilAt = &until
		}
	}
	switch r.Effect {
	case faults.EffectDelay:
		d := distributionOf(r.Delay)
		f.Delay = &d
	case faults.EffectStatus:
		status, sub := r.Status, r.SubStatus
		f.StatusCode, f.SubStatus = &status, &sub
		if status == 429 {
			ra := r.RetryAfter
			if ra == 0 {
				ra = faults.Duration(faults.DefaultRetryAfter)
			}
			f.RetryAfterMs = durationMs(ra)
		}
	}
	return f
}

// replicaMoveJSON is a replica move of a running emulator.
type replicaMoveJSON struct {
	ID        string `json:"id"`
	Region    string `json:"region"`
	Database  string `json:"database"`
	Container string `json:"container"`
	// PartitionKeyRangeID is the range whose replica moves; Replica its index in the
	// set (0 is the primary).
	PartitionKeyRangeID string  `json:"partition_key_range_id"`
	Replica             int     `json:"replica"`
	Effect              string  `json:"effect"`
	RefreshDelayMs      float64 `json:"refresh_delay_ms"`
	OldReplica          string  `json:"old_replica"`
	OldAddress          string  `json:"old_address"`
	NewReplica          string  `json:"new_replica"`
	NewAddress          string  `json:"new_address"`
	// GoneAt: the old replica stops serving; RefreshAt: force-refreshed address
	// requests see the new set; PublishedAt: every address request does.
	GoneAt      time.Time `json:"gone_at"`
	RefreshAt   time.Time `json:"refresh_at"`
	PublishedAt time.Time `json:"published_at"`
	// State is pending, moved, refreshable or published.
	State string `json:"state"`
}

func replicaMovesJSON(moves []emulator.ReplicaMoveStatus) []replicaMoveJSON {
	out := make([]replicaMoveJSON, 0, len(moves))
	for _, m := range moves {
		rng := m.Move.Range
		if rng == "" {
			rng = "0"
		}
		replica := m.Move.Replica
		if m.Move.Primary {
			replica = 0
		}
		out = append(out, replicaMoveJSON{ID: m.ID, Region: m.Move.Region, Database: m.Move.Database, Container: m.Move.Container,
			PartitionKeyRangeID: rng, Replica: replica, Effect: m.Move.Effect, RefreshDelayMs: msOf(time.Duration(m.Move.RefreshDelay)),
			OldReplica: m.OldReplica, OldAddress: m.OldAddress, NewReplica: m.NewReplica, NewAddress: m.NewAddress,
			GoneAt: m.GoneAt.UTC(), RefreshAt: m.RefreshAt.UTC(), PublishedAt: m.PublishedAt.UTC(), State: m.State})
	}
	return out
}

// emulatorStatusJSON is `emulator status -o json`, and what `emulator replication` and
// `emulator enforce-throughput` print.
type emulatorStatusJSON struct {
	Account          string               `json:"account"`
	Endpoint         string               `json:"endpoint"`
	Regions          []emulatorRegionJSON `json:"regions"`
	MultiWrite       bool                 `json:"multi_write"`
	ReplicationLagMs float64              `json:"replication_lag_ms"`
	Persistent       bool                 `json:"persistent"`
	// DataDir is where a persistent emulator keeps its data; null when in memory.
	DataDir *string `json:"data_dir"`
	// PID is the process serving the emulator.
	PID          int               `json:"pid"`
	Latency      []latencyJSON     `json:"latency"`
	Faults       []faultJSON       `json:"faults"`
	UptimeMs     float64           `json:"uptime_ms"`
	ReplicaMoves []replicaMoveJSON `json:"replica_moves"`
	// EnforceThroughput says item operations are throttled by provisioned throughput;
	// Throttled counts the requests it answered 429/3200 (fault rules' 429s not
	// included).
	EnforceThroughput bool  `json:"enforce_throughput"`
	Throttled         int64 `json:"throttled"`
}

func emulatorStatusOf(st emulator.State) emulatorStatusJSON {
	return emulatorStatusJSON{Account: st.Account, Endpoint: st.Endpoint, Regions: emulatorRegionsJSON(st.Regions),
		MultiWrite: st.MultiWrite, ReplicationLagMs: msOf(time.Duration(st.ReplicationLag)), Persistent: st.Persistent,
		DataDir: stringOrNull(st.DataDir), PID: st.PID, Latency: latencyTableJSON(st.Latency), Faults: faultsJSON(st.Faults),
		UptimeMs: msOf(time.Duration(st.Uptime)), ReplicaMoves: replicaMovesJSON(st.ReplicaMoves),
		EnforceThroughput: st.EnforceThroughput, Throttled: st.Throttled}
}

// emulatorFailoverJSON is `emulator failover -o json`: the account's regions after it.
type emulatorFailoverJSON struct {
	WriteRegion string               `json:"write_region"`
	Regions     []emulatorRegionJSON `json:"regions"`
}

func emulatorFailoverOf(acct cosmos.Account) emulatorFailoverJSON {
	out := emulatorFailoverJSON{Regions: []emulatorRegionJSON{}}
	writes := map[string]bool{}
	for i, l := range acct.WritableLocations {
		writes[l.Name] = true
		if i == 0 {
			out.WriteRegion = l.Name
		}
	}
	for _, l := range acct.ReadableLocations {
		out.Regions = append(out.Regions, emulatorRegionJSON{Region: l.Name, Endpoint: l.Endpoint, Write: writes[l.Name]})
	}
	return out
}

// emulatorRangeChangeJSON is `emulator split -o json` and `emulator merge -o json`:
// the ranges the split or merge retired, and those it created in their place.
type emulatorRangeChangeJSON struct {
	Database  string `json:"database"`
	Container string `json:"container"`
	// Retired are the ids of the ranges that answer 410/1002 from now on.
	Retired []string            `json:"retired"`
	Created []emulatorRangeJSON `json:"created"`
}

// emulatorRangeJSON is a partition key range a split or merge created.
type emulatorRangeJSON struct {
	ID           string `json:"id"`
	MinInclusive string `json:"min_inclusive"`
	MaxExclusive string `json:"max_exclusive"`
	// Parents are every range it descends from, oldest first, as the ranges feed
	// lists them.
	Parents []string `json:"parents"`
	// DocumentCount is how many documents moved into it.
	DocumentCount int `json:"document_count"`
}

func emulatorRangeChangeOf(ch emulator.RangeChange) emulatorRangeChangeJSON {
	out := emulatorRangeChangeJSON{Database: ch.Database, Container: ch.Container, Retired: ch.Retired, Created: []emulatorRangeJSON{}}
	for i, r := range ch.Created {
		out.Created = append(out.Created, emulatorRangeJSON{ID: r.ID, MinInclusive: r.MinInclusive, MaxExclusive: r.MaxExclusive,
			Parents: r.Parents, DocumentCount: ch.Documents[i]})
	}
	return out
}

// emulatorServingJSON is the line `cosmosctl emulator -o json` prints once it serves.
type emulatorServingJSON struct {
	Endpoint string `json:"endpoint"`
	// Key is the well-known emulator key; null for a key of the emulator's own
	// (--key-file), which is never printed.
	Key *string `json:"key"`
	// AAD says it accepts Azure AD requests: its test token (never printed), or tokens
	// made as for Microsoft's emulator (aad_emulator_tokens).
	AAD     bool                 `json:"aad"`
	Regions []emulatorRegionJSON `json:"regions"`
	Latency []latencyJSON        `json:"latency"`
	// DataDir is where it keeps its data; null when in memory.
	DataDir *string `json:"data_dir"`
	// EnforceThroughput: item operations are throttled by provisioned throughput.
	EnforceThroughput bool `json:"enforce_throughput"`
	// TLS says every endpoint serves https; TLSCertificateFile is the PEM file of its
	// certificate, for clients to trust (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS,
	// REQUESTS_CA_BUNDLE), and TLSCertificateSHA256 its fingerprint; both null without TLS.
	TLS                  bool    `json:"tls"`
	TLSCertificateFile   *string `json:"tls_certificate_file"`
	TLSCertificateSHA256 *string `json:"tls_certificate_sha256"`
	// DirectCertificateFile is the PEM file of the certificate the RNTBD (direct mode)
	// and Gateway 2.0 listeners serve, which always use TLS: the https certificate with
	// --tls, otherwise one generated at start. Clients trust it with SSL_CERT_FILE.
	DirectCertificateFile *string `json:"direct_certificate_file"`
}

func stringOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
