package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/shardscope"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

// Sources of an export, as the state file names them.
const (
	SourceQuery      = "query"
	SourceChangeFeed = "change-feed"
)

const (
	stateKind    = "cosmosctl-export"
	stateVersion = 1
	// maxStateSize bounds what LoadState reads: a query's position is at most the
	// pipeline's token (96 KiB), a feed's a continuation per range.
	maxStateSize = 8 << 20
)

// Binding is what an export is of: a state file resumes only the export it was written
// for, since a position means nothing in another container or query, and a file of
// another export's lines, or stripped otherwise, is not this export's output.
type Binding struct {
	Endpoint     string          `json:"endpoint"`
	Database     string          `json:"database"`
	Container    string          `json:"container"`
	Source       string          `json:"source"`
	Query        string          `json:"query,omitempty"`
	Parameters   json.RawMessage `json:"parameters,omitempty"`
	PartitionKey json.RawMessage `json:"partition_key,omitempty"`
	// Strip lists the top-level properties dropped from every item, sorted.
	Strip []string `json:"strip"`
	// Output is the absolute path of the output file.
	Output string `json:"output"`
	// Filter is the expression that rewrote every item (--jq), "" for none.
	Filter string `json:"filter,omitempty"`
	// Shard is the part of the container a sharded export reads (--shard, --feed-range):
	// its spec, interval and the ranges its plan was computed from. A resumed shard reads
	// the recorded interval. nil for the whole container.
	Shard *shardscope.Scope `json:"shard,omitempty"`
}

// State is a checkpoint of an export: where its source was after the last page it
// wrote, and how long the output was then.
type State struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
	Binding
	// Position is the source's, opaque here; null before the first page.
	Position      json.RawMessage `json:"position"`
	OutputBytes   int64           `json:"output_bytes"`
	Items         int64           `json:"items"`
	RequestCharge float64         `json:"request_charge"`
	// Complete says the export wrote every item: a run with this state has nothing to do.
	Complete bool      `json:"complete"`
	SavedAt  time.Time `json:"saved_at"`
}

// NewState is the state of an export that has not started.
func NewState(b Binding) *State {
	b.Endpoint = statefile.NormalizeEndpoint(b.Endpoint)
	b.Strip = slices.Sorted(slices.Values(b.Strip))
	if b.Strip == nil {
		b.Strip = []string{}
	}
	return &State{Kind: stateKind, Version: stateVersion, Binding: b}
}

// StateError is a state file that cannot resume this export: unreadable, not an export's,
// or another export's.
type StateError struct {
	Path    string
	Problem string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("state file %s %s: give another --state file, or delete it to start the export over", e.Path, e.Problem)
}

// LoadState reads the state file at path; nil and no error when there is none (a first
// run).
func LoadState(path string) (*State, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxStateSize+1)); err != nil {
		return nil, err
	}
	if buf.Len() > maxStateSize {
		return nil, &StateError{Path: path, Problem: "is too large to be an export's state"}
	}
	var s State
	if err := json.Unmarshal(buf.Bytes(), &s); err != nil {
		return nil, &StateError{Path: path, Problem: "is not an export's state (not valid JSON)"}
	}
	switch {
	case s.Kind != stateKind:
		return nil, &StateError{Path: path, Problem: fmt.Sprintf("is not an export's state (its kind is %q)", s.Kind)}
	case s.Version != stateVersion:
		return nil, &StateError{Path: path, Problem: fmt.Sprintf("was written by another version of cosmosctl (format %d, this one reads %d)", s.Version, stateVersion)}
	}
	return &s, nil
}

// Check refuses a state written for another export than b.
func (s *State) Check(path string, b Binding) error {
	want := NewState(b).Binding
	have := s.Binding
	if !shardscope.Same(have.Shard, want.Shard) {
		return &StateError{Path: path, Problem: fmt.Sprintf("is for %s, not %s", have.Shard, want.Shard)}
	}
	for _, f := range []struct{ what, have, want string }{
		{"account", have.Endpoint, want.Endpoint},
		{"database", have.Database, want.Database},
		{"container", have.Container, want.Container},
		{"source", have.Source, want.Source},
		{"query", have.Query, want.Query},
		{"query parameters", compact(have.Parameters), compact(want.Parameters)},
		{"partition key", compact(have.PartitionKey), compact(want.PartitionKey)},
		{"stripped properties", fmt.Sprint(have.Strip), fmt.Sprint(want.Strip)},
		{"output file", have.Output, want.Output},
		{"--jq filter", have.Filter, want.Filter},
	} {
		if f.have != f.want {
			return &StateError{Path: path, Problem: fmt.Sprintf("is for another export: its %s is %s, this export's %s", f.what, quoted(f.have), quoted(f.want))}
		}
	}
	return nil
}

// Save replaces the state file atomically: a reader, or a run after a crash, finds the
// old state or the new.
func (s *State) Save(path string, now time.Time) error {
	s.SavedAt = now.UTC()
	return saveJSON(path, s)
}

// saveJSON writes v, indented, to path atomically (the state file and the manifest).
func saveJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return statefile.WriteFile(path, append(b, '\n'))
}

func compact(m json.RawMessage) string {
	var b bytes.Buffer
	if len(m) == 0 || json.Compact(&b, m) != nil {
		return string(bytes.TrimSpace(m))
	}
	if b.String() == "null" {
		return ""
	}
	return b.String()
}

func quoted(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}
