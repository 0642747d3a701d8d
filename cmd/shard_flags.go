package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/shardscope"
	"github.com/cosmosctl/cosmosctl/shard"
)

// shardFlags are --shard and --feed-range, shared by export, changes and query: each
// reads only one shard's effective partition keys, so that N processes (a Kubernetes
// Indexed Job, GNU parallel, a loop) read a container together, each key once.
type shardFlags struct {
	shard, feedRange string
	flags            *pflag.FlagSet
}

func (s *shardFlags) register(f *pflag.FlagSet) {
	s.flags = f
	f.StringVar(&s.shard, "shard", "", "read shard i of N only, i/N (0 <= i < N); /N or auto/N takes i from $JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs)")
	f.StringVar(&s.feedRange, "feed-range", "", `read this feed range only: the .NET SDK's JSON, {"Range":{"min":"","max":"80"}}, or the Java SDK's base64url string (cosmosctl ranges --shards N prints both)`)
}

// asked is the scope the flags ask for (nil for the whole container), read without I/O:
// a --shard gives its spec (its interval needs the ranges), a --feed-range its interval.
func (s *shardFlags) asked(getenv func(string) string) (*shardscope.Scope, error) {
	switch {
	case s.flags.Changed("shard") && s.flags.Changed("feed-range"):
		return nil, usageErrorf("--shard and --feed-range both say what to read: give one")
	case s.flags.Changed("shard"):
		spec, err := shard.ParseSpec(s.shard, getenv)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		return &shardscope.Scope{Index: spec.Index, Count: spec.Count}, nil
	case s.flags.Changed("feed-range"):
		iv, err := shard.ParseFeedRange(s.feedRange)
		if err != nil {
			return nil, usageErrorf("--feed-range: %v", err)
		}
		return &shardscope.Scope{Min: iv.Min, Max: iv.Max}, nil
	}
	return nil, nil
}

// flagName is the flag that gave the scope, for messages.
func (s *shardFlags) flagName() string {
	if s.flags.Changed("feed-range") {
		return "--feed-range"
	}
	return "--shard"
}

// checkRecorded refuses, before any request, a state written for another shard than
// the flags ask for (or for a sharded read when they ask for none, or the other way).
func checkRecorded(statePath string, recorded, asked *shardscope.Scope) error {
	if shardscope.Same(recorded, asked) {
		return nil
	}
	return usageErrorf("%s", shardscope.Mismatch(statePath, recorded, asked))
}

// resolveScope is what the read covers: a resumed shard's recorded scope (its interval,
// never a new plan: the ranges may have split since its first start), or the plan of
// the container's current ranges, which every shard computes alike. A shard that cuts a
// physical range says so: a sub-range read costs more request units.
func resolveScope(ctx context.Context, sess *session, io *IOStreams, recorded, asked *shardscope.Scope) (*shardscope.Scope, error) {
	if recorded != nil || asked == nil {
		return recorded, nil
	}
	ranges, _, err := sess.client.PartitionKeyRanges(ctx, sess.settings.Database, sess.settings.Container, true, 0)
	if err != nil {
		return nil, err
	}
	sc := *asked
	if sc.Count > 0 {
		sh, err := shard.Spec{Index: sc.Index, Count: sc.Count}.Of(ranges)
		if err != nil {
			return nil, fmt.Errorf("--shard %s: %w", sc.Spec(), err)
		}
		sc.Min, sc.Max = sh.Min, sh.Max
	}
	iv := sc.EPK()
	sc.Ranges = shardscope.RangesOf(iv, ranges)
	sc.SubRange = shardscope.Cuts(iv, ranges)
	if sc.SubRange {
		io.notice(fmt.Sprintf("cosmosctl: %s cuts partition key range %s: it is read as a sub-range (x-ms-start-epk/x-ms-end-epk), whose pages cost more request units than a whole range's; fewer shards than ranges avoid it",
			&sc, cutRanges(iv, ranges)))
	}
	return &sc, nil
}

// cutRanges lists the ranges iv cuts.
func cutRanges(iv cosmos.EPKRange, ranges []cosmos.PartitionKeyRange) string {
	var ids []string
	for _, r := range iv.Overlapping(ranges) {
		if _, narrowed := iv.Within(r); narrowed {
			ids = append(ids, r.ID)
		}
	}
	return strings.Join(ids, ", ")
}

// shardRULimit is the RU/s cap one shard keeps to: perShard when it is given
// (--max-ru-per-second-per-shard), else the total (--max-ru-per-second) divided by the
// shard count, so that N shards started with the same flags together spend no more
// than the total the user gave; without a shard, the total. 0 is no cap. The shards do
// not talk to each other: the division is the whole coordination, and a shard that
// finishes early leaves its share unspent.
func shardRULimit(total, perShard float64, spec shard.Spec) float64 {
	switch {
	case spec.Count < 1:
		return total
	case perShard > 0:
		return perShard
	}
	return total / float64(spec.Count)
}

// shardRUHelp is the help of --max-ru-per-second-per-shard, the same on every command
// that takes --shard.
const shardRUHelp = "with --shard: spend at most this many RU/s in this shard, instead of --max-ru-per-second divided by the shard count"
