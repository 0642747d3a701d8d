package bulk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
)

// Shard is the share of an input's lines that one process of a sharded import takes:
// line n (numbered from 1, as the import numbers them) is shard (n-1) mod Count's, so
// that every line is one shard's and only one's, whatever the other processes do. The
// zero value is the whole input.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Whole reports the zero shard: every line, no --shard.
func (s Shard) Whole() bool { return s.Count == 0 }

// Has reports whether line n is the shard's.
func (s Shard) Has(n int64) bool {
	return s.Count <= 1 || (n-1)%int64(s.Count) == int64(s.Index)
}

// LinesOf is how many of lines 1 to total are the shard's.
func (s Shard) LinesOf(total int64) int64 {
	if s.Count <= 1 {
		return total
	}
	n := total / int64(s.Count)
	if int64(s.Index) < total%int64(s.Count) {
		n++
	}
	return n
}

func (s Shard) String() string {
	if s.Whole() {
		return "the whole input"
	}
	return fmt.Sprintf("shard %d/%d", s.Index, s.Count)
}

// shardRunIDSpace is the UUID namespace of the run ids that ShardRunID derives.
var shardRunIDSpace = uuid.MustParse("6f1d8a52-2f0e-4c55-9b59-2f6b0c1e7a28")

// ShardRunID is the run id every shard of a sharded import computes for itself without
// talking to the others: a name-based UUID (version 5) of the input's fingerprint, the
// database and container, the mode and the shard count, so that the _trackingIds of
// all shards are those of one run. The endpoint is left out: shards may reach the same
// account by different names. Two imports of the same input into the same container
// with the same count, started afresh, share it: the second's 409s on the first's
// items then count as created, not already present; --run-id tells them apart.
func ShardRunID(in Fingerprint, target Target, mode Mode, count int) string {
	name := fmt.Sprintf("cosmosctl-import\x00%d\x00%s\x00%d\x00%s\x00%s\x00%s\x00%d",
		in.Size, in.PrefixSHA256, in.PrefixBytes, target.Database, target.Container, mode, count)
	return uuid.NewSHA1(shardRunIDSpace, []byte(name)).String()
}

// CheckRun reports whether the state is the one of this shard of this run: a
// *StateError saying what differs when not. runID "" accepts the state's.
func (s *State) CheckRun(path string, shard Shard, runID string) error {
	var mine Shard
	if s.Shard != nil {
		mine = *s.Shard
	}
	switch {
	case mine != shard && mine.Whole():
		return &StateError{Path: path, Problem: fmt.Sprintf("it is the import of the whole input, not of %s", shard)}
	case mine != shard && shard.Whole():
		return &StateError{Path: path, Problem: fmt.Sprintf("it is %s's, not the import of the whole input", mine)}
	case mine != shard:
		return &StateError{Path: path, Problem: fmt.Sprintf("it is %s's, not %s's (each shard keeps its own --state)", mine, shard)}
	case runID != "" && s.RunID != runID:
		return &StateError{Path: path, Problem: fmt.Sprintf("it is run %s, not --run-id %s", s.RunID, runID)}
	}
	return nil
}

// pass goes over the next line without keeping it (a line of another shard): no copy,
// no parsing, only the search for its end. It returns io.EOF after the last line.
func (s *Source) pass(ctx context.Context) error {
	s.in.ctx = ctx
	if s.skipping {
		if err := s.skipLine(ctx); err != nil {
			return err
		}
	}
	started := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk, err := s.buffered()
		if len(chunk) == 0 {
			switch {
			case !errors.Is(err, io.EOF):
				return err
			case !started:
				return io.EOF
			}
			s.n++ // the last line, without a newline
			return nil
		}
		started = true
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			s.r.Discard(i + 1)
			s.n++
			return nil
		}
		s.r.Discard(len(chunk))
	}
}
