package changefeed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/shardscope"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

const (
	stateKind    = "cosmosctl-changefeed"
	stateVersion = 1
	maxStateSize = 16 << 20
)

// State is the position of a change feed: each partition key range's continuation (the
// etag its next poll sends), bound to the account endpoint, database, container and
// partition key it was read from. Its JSON form is versioned (Kind, Version).
type State struct {
	Kind         string          `json:"kind"`
	Version      int             `json:"version"`
	Endpoint     string          `json:"endpoint"`
	Database     string          `json:"database"`
	Container    string          `json:"container"`
	PartitionKey json.RawMessage `json:"partition_key,omitempty"`
	// PrefixRange is set when PartitionKey is a prefix of a hierarchical key: the
	// effective partition keys it covers (cosmos.PrefixRange), within which every range
	// below lies, so that a resumed feed reads that prefix's changes only.
	PrefixRange *cosmos.EPKRange `json:"partition_key_prefix_range,omitempty"`
	// Shard is the part of the container the feed reads (--shard, --feed-range): every
	// range below lies within its interval. nil for the whole container.
	Shard   *shardscope.Scope `json:"shard,omitempty"`
	SavedAt time.Time         `json:"saved_at"`
	Ranges  []RangeState      `json:"ranges"`

	path string // the file LoadState read, for error messages
}

// RangeState is one partition key range's position ("" ID with a partition key).
type RangeState struct {
	ID  string `json:"id"`
	Min string `json:"min"`
	Max string `json:"max"`
	// Scoped: [Min, Max) is only part of range ID (a range that was merged into it),
	// read with x-ms-start-epk/x-ms-end-epk.
	Scoped bool `json:"scoped,omitempty"`
	// Continuation is the etag the range's next poll sends as If-None-Match; "" for a
	// range never polled, which starts at Since (or the beginning).
	Continuation string     `json:"continuation"`
	Since        *time.Time `json:"since,omitempty"`
	// StopAt is the position the range ends at (Until StartPoint), "" for none.
	StopAt string `json:"stop_at,omitempty"`
}

// StateError is a state file that cannot be used: unreadable, not JSON, another kind or
// version of file, or the position of another container.
type StateError struct {
	Path    string
	Problem string
	Err     error
}

func (e *StateError) Error() string {
	if e.Path == "" {
		return "change feed state: " + e.Problem
	}
	return fmt.Sprintf("state file %s: %s", e.Path, e.Problem)
}

func (e *StateError) Unwrap() error { return e.Err }

// Save writes the state to path atomically: a reader (or a crash) sees the old file or
// the new one, never half of one.
func (s *State) Save(path string) error {
	c := *s
	c.SavedAt = time.Now().UTC()
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return err
	}
	return statefile.WriteFile(path, append(b, '\n'))
}

// LoadState reads a state file Save wrote. A missing file is an error wrapping
// fs.ErrNotExist (a first run: start from Options.From); any other problem is a
// *StateError naming the file and what is wrong with it.
func LoadState(path string) (*State, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &StateError{Path: path, Problem: "cannot be read: " + unwrapPath(err), Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateSize+1))
	if err != nil {
		return nil, &StateError{Path: path, Problem: "cannot be read: " + unwrapPath(err), Err: err}
	}
	if len(b) > maxStateSize {
		return nil, &StateError{Path: path, Problem: fmt.Sprintf("is larger than %d MiB: not a change feed state file", maxStateSize>>20)}
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return nil, &StateError{Path: path, Problem: "is not a change feed state file (not valid JSON: " + err.Error() + "); give another --state file, or delete it to start again", Err: err}
	}
	switch {
	case s.Kind != stateKind:
		return nil, &StateError{Path: path, Problem: fmt.Sprintf("is not a change feed state file (kind %q, not %q); give another --state file", s.Kind, stateKind)}
	case s.Version != stateVersion:
		return nil, &StateError{Path: path, Problem: fmt.Sprintf("has format version %d, and this cosmosctl reads version %d: use the cosmosctl that wrote it, or delete it to start again", s.Version, stateVersion)}
	case s.Database == "" || s.Container == "":
		return nil, &StateError{Path: path, Problem: "names no database or container: it is damaged; delete it to start again"}
	case len(s.Ranges) == 0:
		return nil, &StateError{Path: path, Problem: "holds no partition key range: it is damaged; delete it to start again"}
	}
	s.path = path
	return &s, nil
}

// check refuses a state read from another account, container, partition key or prefix
// than o's, and one of a prefix whose ranges reach beyond the prefix's keys.
func (s *State) check(endpoint string, o *Options) error {
	pk, prefix := "", o.PartitionKeyPrefix != nil
	switch {
	case o.PartitionKey != nil:
		pk = o.PartitionKey.JSON()
	case prefix:
		pk = o.PartitionKeyPrefix.JSON()
	}
	var b bytes.Buffer
	spk := strings.TrimSpace(string(s.PartitionKey))
	if json.Compact(&b, s.PartitionKey) == nil {
		spk = b.String()
	}
	if spk == "null" {
		spk = ""
	}
	mine := describe(endpoint, o.Database, o.Container, pk, prefix)
	theirs := describe(s.Endpoint, s.Database, s.Container, spk, s.PrefixRange != nil)
	if statefile.NormalizeEndpoint(s.Endpoint) != statefile.NormalizeEndpoint(endpoint) || s.Database != o.Database || s.Container != o.Container ||
		!samePK(spk, pk) || prefix != (s.PrefixRange != nil) {
		return &StateError{Path: s.path, Problem: fmt.Sprintf("is the change feed position of %s, not of %s: give another --state file for this container and --pk, or delete it to start again", theirs, mine)}
	}
	if !shardscope.Same(s.Shard, o.Scope) {
		return &StateError{Path: s.path, Problem: shardscope.Mismatch(s.path, s.Shard, o.Scope)}
	}
	if s.Shard != nil {
		span := s.Shard.EPK()
		for _, r := range s.Ranges {
			if r.ID == "" || !span.Contains(cosmos.EPKRange{Min: r.Min, Max: r.Max}) {
				return &StateError{Path: s.path, Problem: fmt.Sprintf("holds partition key range %q [%s, %s), which reaches beyond %s: it is damaged; delete it to start again", r.ID, r.Min, r.Max, s.Shard)}
			}
		}
	}
	if !prefix {
		return nil
	}
	span := cosmos.PrefixRange(o.PartitionKeyPrefix)
	if !strings.EqualFold(s.PrefixRange.Min, span.Min) || !strings.EqualFold(s.PrefixRange.Max, span.Max) {
		return &StateError{Path: s.path, Problem: fmt.Sprintf("records the effective partition keys [%s, %s) for partition key prefix %s, which covers [%s, %s): it is damaged; delete it to start again", s.PrefixRange.Min, s.PrefixRange.Max, pk, span.Min, span.Max)}
	}
	for _, r := range s.Ranges {
		if r.ID == "" || !span.Contains(cosmos.EPKRange{Min: r.Min, Max: r.Max}) {
			return &StateError{Path: s.path, Problem: fmt.Sprintf("holds partition key range %q [%s, %s), which reaches beyond partition key prefix %s: it is damaged; delete it to start again", r.ID, r.Min, r.Max, pk)}
		}
	}
	return nil
}

func samePK(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func describe(endpoint, db, coll, pk string, prefix bool) string {
	s := fmt.Sprintf("container %s/%s at %s", db, coll, endpoint)
	switch {
	case prefix:
		s += " (partition key prefix " + pk + ")"
	case pk != "":
		s += " (partition key " + pk + ")"
	}
	return s
}

func unwrapPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
