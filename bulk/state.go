package bulk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

const (
	stateKind    = "cosmosctl-import"
	stateVersion = 1
	// maxStateBytes bounds what LoadState reads: the done lines above the prefix are
	// few (about the concurrency's worth), so a state file is small.
	maxStateBytes = 64 << 20
)

// Target is the container an import writes to.
type Target struct {
	Endpoint  string `json:"endpoint"`
	Database  string `json:"database"`
	Container string `json:"container"`
}

func (t Target) String() string {
	return fmt.Sprintf("%s/%s at %s", t.Database, t.Container, t.Endpoint)
}

// State is what an import has done, as checkpointed: enough to resume it and to report
// on the whole run.
type State struct {
	// RunID names the run; with the line number it makes each item's _trackingId.
	RunID  string      `json:"run_id"`
	Input  Fingerprint `json:"input"`
	Target Target      `json:"target"`
	Mode   Mode        `json:"mode"`
	// Shard is the share of the lines this state's processes take (--shard); nil for
	// the whole input. A state is only resumed by the same shard.
	Shard *Shard `json:"shard,omitempty"`
	// Prefix: every line from 1 to Prefix is done (or another shard's). Above: the done
	// lines after it.
	Prefix int64   `json:"done_prefix"`
	Above  []int64 `json:"done_above"`
	Counts Counts  `json:"counts"`
	// SentThrough: no line after it has been sent. A process saves it before it sends
	// a line past it, so that a resumed run knows which lines an earlier process may
	// have written without its answer being saved (the rest were never sent).
	SentThrough int64 `json:"sent_through"`
	// Rejected is the rejected-lines file, and RejectedBytes how much of it holds the
	// rejections of done lines: a resumed run cuts it there before it appends, so that
	// a line rejected after the last checkpoint is not listed twice.
	Rejected      string `json:"rejected_file"`
	RejectedBytes int64  `json:"rejected_bytes"`
	// Runs is how many processes worked on the run, and Elapsed their time together.
	Runs    int           `json:"runs"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Complete says every line was done when the state was saved.
	Complete bool `json:"complete"`
}

// NewState starts a run.
func NewState(in Fingerprint, target Target, mode Mode) *State {
	return &State{RunID: uuid.NewString(), Input: in, Target: target, Mode: mode}
}

// shard is the state's share of the input: the zero Shard for all of it.
func (s *State) shard() Shard {
	if s.Shard == nil {
		return Shard{}
	}
	return *s.Shard
}

type stateFile struct {
	Kind      string    `json:"kind"`
	Version   int       `json:"version"`
	WrittenAt time.Time `json:"written_at"`
	State     *State    `json:"state"`
}

// LoadState reads a state file; a missing file is nil and no error (a new run).
func LoadState(path string) (*State, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var sf stateFile
	dec := json.NewDecoder(&limitedReader{f: f, left: maxStateBytes})
	if err := dec.Decode(&sf); err != nil || sf.State == nil {
		return nil, &StateError{Path: path, Problem: "it is not a cosmosctl import state file (it does not read as one)"}
	}
	switch {
	case sf.Kind != stateKind:
		return nil, &StateError{Path: path, Problem: fmt.Sprintf("it holds %q state, not an import's", sf.Kind)}
	case sf.Version != stateVersion:
		return nil, &StateError{Path: path, Problem: fmt.Sprintf("it was written by another cosmosctl (format version %d, this one reads %d)", sf.Version, stateVersion)}
	case sf.State.RunID == "":
		return nil, &StateError{Path: path, Problem: "it has no run id"}
	}
	return sf.State, nil
}

type limitedReader struct {
	f    *os.File
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errors.New("state file too large")
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.f.Read(p)
	l.left -= int64(n)
	return n, err
}

// Save writes the state to path atomically: a reader, or a process killed meanwhile,
// sees the previous checkpoint or this one.
func (s *State) Save(path string, now time.Time) error {
	b, err := json.MarshalIndent(stateFile{Kind: stateKind, Version: stateVersion, WrittenAt: now.UTC(), State: s}, "", " ")
	if err != nil {
		return err
	}
	return statefile.WriteFile(path, append(b, '\n'))
}

// StateError is a state file that cannot be resumed here.
type StateError struct {
	Path    string
	Problem string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("cannot resume from state file %s: %s; give another --state file, or remove it to start the import afresh", e.Path, e.Problem)
}

// Check reports whether the state can be resumed with this input, target and mode: a
// *StateError saying what differs when not. For an input of unknown size (standard
// input) only the first MiB is compared.
func (s *State) Check(path string, in Fingerprint, target Target, mode Mode) error {
	switch {
	case s.Target != target:
		return &StateError{Path: path, Problem: fmt.Sprintf("it is the import into %s, not into %s", s.Target, target)}
	case s.Mode != mode:
		return &StateError{Path: path, Problem: fmt.Sprintf("it is an import with --mode %s, not %s", s.Mode, mode)}
	case s.Input.PrefixSHA256 != in.PrefixSHA256 || s.Input.PrefixBytes != in.PrefixBytes ||
		(s.Input.Size >= 0 && in.Size >= 0 && s.Input.Size != in.Size):
		return &StateError{Path: path, Problem: fmt.Sprintf("it is the import of another input (%s: %s), not of %s (%s)",
			s.Input.Name, s.Input.describe(), in.Name, in.describe())}
	}
	return nil
}

func (f Fingerprint) describe() string {
	hash := f.PrefixSHA256
	if len(hash) > 12 {
		hash = hash[:12]
	}
	what := "its first MiB"
	if f.PrefixBytes < fingerprintBytes {
		what = "all of it"
	}
	if f.Size < 0 {
		return fmt.Sprintf("size unknown, sha256 of %s %s…", what, hash)
	}
	return fmt.Sprintf("%d bytes, sha256 of %s %s…", f.Size, what, hash)
}

// doneSet is the lines done: a prefix and the lines above it. The lines of other
// shards count as done here (never as done in the counts), so that a shard's prefix
// moves on over them and its state keeps only about the concurrency's worth of lines
// above it, as an import of the whole input does.
type doneSet struct {
	shard  Shard
	prefix int64
	above  map[int64]struct{}
}

func newDoneSet(shard Shard, prefix int64, above []int64) *doneSet {
	d := &doneSet{shard: shard, prefix: prefix, above: map[int64]struct{}{}}
	d.advance()
	for _, n := range above {
		d.add(n)
	}
	return d
}

func (d *doneSet) has(n int64) bool {
	if n <= d.prefix {
		return true
	}
	_, ok := d.above[n]
	return ok
}

func (d *doneSet) add(n int64) {
	if n <= d.prefix {
		return
	}
	if n != d.prefix+1 {
		d.above[n] = struct{}{}
		return
	}
	d.prefix++
	d.advance()
}

// advance moves the prefix over the done lines and other shards' lines after it.
func (d *doneSet) advance() {
	for {
		next := d.prefix + 1
		if _, ok := d.above[next]; ok {
			delete(d.above, next)
		} else if d.shard.Has(next) {
			return
		}
		d.prefix++
	}
}

func (d *doneSet) sortedAbove() []int64 {
	out := make([]int64, 0, len(d.above))
	for n := range d.above {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
