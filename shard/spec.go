package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// IndexEnv is the variable a Kubernetes Indexed Job sets to each pod's completion index
// (completionMode: Indexed, stable since v1.24); "/N" and "auto/N" read the index from it.
const IndexEnv = "JOB_COMPLETION_INDEX"

// Spec is one shard of a plan: Index of Count, 0 <= Index < Count.
type Spec struct{ Index, Count int }

// String is the --shard form, "i/N".
func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseSpec reads --shard: "i/N"; "/N" or "auto/N" takes i from JOB_COMPLETION_INDEX
// (Kubernetes Indexed Jobs); errors are one line naming the problem and the fix.
func ParseSpec(flag string, getenv func(string) string) (Spec, error) {
	s := strings.TrimSpace(flag)
	idx, cnt, ok := strings.Cut(s, "/")
	if !ok {
		return Spec{}, fmt.Errorf("--shard %q: want i/N (shard i of N, counting from 0), or auto/N to take i from %s", flag, IndexEnv)
	}
	n, err := strconv.Atoi(strings.TrimSpace(cnt))
	if err != nil {
		return Spec{}, fmt.Errorf("--shard %q: the shard count %q is not a whole number: want i/N, e.g. 0/4", flag, cnt)
	}
	if n < 1 {
		return Spec{}, fmt.Errorf("--shard %q: the shard count must be at least 1: want i/N with N >= 1, e.g. 0/4", flag)
	}
	idx = strings.TrimSpace(idx)
	from := ""
	if idx == "" || strings.EqualFold(idx, "auto") {
		var v string
		if getenv != nil {
			v = getenv(IndexEnv)
		}
		if strings.TrimSpace(v) == "" {
			return Spec{}, fmt.Errorf("--shard %q: %s is not set: run as a Kubernetes Indexed Job (completionMode: Indexed) or give the index, e.g. --shard 0/%d", flag, IndexEnv, n)
		}
		idx, from = strings.TrimSpace(v), " (from "+IndexEnv+")"
	}
	i, err := strconv.Atoi(idx)
	if err != nil {
		return Spec{}, fmt.Errorf("--shard %q: the shard index %q%s is not a whole number: want i/N with 0 <= i < N", flag, idx, from)
	}
	if i < 0 || i >= n {
		return Spec{}, fmt.Errorf("--shard %q: the shard index %d%s is outside 0..%d: shards of %d count from 0 to %d", flag, i, from, n-1, n, n-1)
	}
	return Spec{Index: i, Count: n}, nil
}
