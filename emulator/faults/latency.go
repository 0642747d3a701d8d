package faults

import "fmt"

// LatencySpec is one [[latency]] table of a scenario file. The distribution
// is embedded so its fields sit beside region and operation in the file
// rather than in a nested table.
type LatencySpec struct {
	Region    string `toml:"region,omitempty" json:"region,omitempty"`
	Operation string `toml:"operation,omitempty" json:"operation,omitempty"`
	Distribution
}

// Validate shadows the embedded Distribution.Validate, which would otherwise
// be promoted and silently skip the operation check.
func (s LatencySpec) Validate() error {
	return validateLatency(s.Region, s.Operation, s.Distribution)
}

// String shadows the promoted Distribution.String so that printing a spec
// does not hide where it applies.
func (s LatencySpec) String() string {
	return fmt.Sprintf("%s %s %s", regionLabel(s.Region), operationOrAll(s.Operation), s.Distribution)
}

// LatencyEntry is one row of the active latency table, for display.
type LatencyEntry struct {
	Region       string       `json:"region"`
	Operation    string       `json:"operation"`
	Distribution Distribution `json:"distribution"`
}

func validateLatency(region, op string, d Distribution) error {
	op = operationOrAll(op)
	if !ValidOperation(op) {
		return fmt.Errorf("latency for %s: unknown operation %q; valid operations: %s", regionLabel(region), op, validOperations)
	}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("latency for %s, operation %q: %w", regionLabel(region), op, err)
	}
	return nil
}

// operationOrAll lets a latency entry omit its operation, which reads
// naturally as "every operation".
func operationOrAll(op string) string {
	if op == "" {
		return GroupAll
	}
	return op
}

func regionLabel(region string) string {
	if region == "" {
		return "all regions"
	}
	return fmt.Sprintf("region %q", region)
}

// latencyTable is small (a handful of regions times a few operations), so a
// slice in insertion order is both the lookup structure and the display
// order.
type latencyTable []latencyRow

type latencyRow struct {
	key   string // regionKey of entry.Region
	entry LatencyEntry
}

// set replaces an existing row for the same region and operation in place,
// keeping the display order stable while a rehearsal tweaks values.
func (t latencyTable) set(region, op string, d Distribution) latencyTable {
	row := latencyRow{key: regionKey(region), entry: LatencyEntry{Region: region, Operation: operationOrAll(op), Distribution: d}}
	if i := t.index(row.key, row.entry.Operation); i >= 0 {
		t[i] = row
		return t
	}
	return append(t, row)
}

func (t latencyTable) index(key, op string) int {
	for i, r := range t {
		if r.key == key && r.entry.Operation == op {
			return i
		}
	}
	return -1
}

// lookup picks the most specific entry: a region-specific entry always beats
// a default one, and within either an exact operation beats its group, which
// beats "all". This lets a scenario set a broad baseline and carve out
// exceptions without repeating it.
func (t latencyTable) lookup(region, op string) (Distribution, bool) {
	key := regionKey(region)
	best, bestRank := -1, 0
	for i, r := range t {
		rank := operationRank(r.entry.Operation, op)
		if rank < 0 {
			continue
		}
		switch r.key {
		case key:
		case "":
			rank += 3
		default:
			continue
		}
		if best < 0 || rank < bestRank {
			best, bestRank = i, rank
		}
	}
	if best < 0 {
		return Distribution{}, false
	}
	return t[best].entry.Distribution, true
}

func (t latencyTable) entries() []LatencyEntry {
	out := make([]LatencyEntry, len(t))
	for i, r := range t {
		out[i] = r.entry
	}
	return out
}
