package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/retries"
)

// The set-up of a probe (the account lookup, then finding or creating the probe item)
// runs when someone wants to know which region is sick, so a sick region must not stop
// it: every request of the set-up is bounded by setUpBounds' attempt timeout, all of it
// by its whole bound, the existence read goes to every region at once and takes the
// first that answers, and the upsert goes to the write region. When the item can be
// neither read nor created (the write region is down, and the item was never made) the
// probe reads it anyway, and a 404/0 (not found) counts as the region's answer: the
// read went to the partition's replicas like any point read, and the service's "not
// found" is as real a round trip as a 200. Not the container's resource instead: a GET
// of a collection is a metadata request, which the service rate-limits per account
// apart from the data plane and which has no partition key range for --replicas. One
// notice on stderr says why, and the summary's "probed" says "missing_item".
const (
	minSetUpAttempt = time.Second
	maxSetUpAttempt = 2 * time.Second
	minSetUpBound   = 3 * time.Second
	maxSetUpBound   = 10 * time.Second
)

// setUpBounds are the bounds of the set-up of a probe whose requests are bounded by
// timeout: each request about timeout, within [minSetUpAttempt, maxSetUpAttempt], the
// whole about timeout, within [minSetUpBound, maxSetUpBound]. The set-up is more
// patient than a tight probe timeout: a probe measuring a 300 ms bound still needs its
// item, and a write region a continent away (or a busy machine) can take longer than
// that to create it; a hung region costs the set-up no more for it, since the
// existence read takes the first region that answers.
func setUpBounds(timeout time.Duration) (attempt, whole time.Duration) {
	return min(max(timeout, minSetUpAttempt), maxSetUpAttempt), min(max(timeout, minSetUpBound), maxSetUpBound)
}

// probeTarget is what a probe reads, and how its set-up came to it.
type probeTarget struct {
	op engine.Operation
	// created: the probe upserted its item, which it then deletes at the end with
	// Options.Cleanup; an item it found, or one named by Options.ID, it never deletes.
	created bool
	// missing: the probe item could be neither found nor created, and a 404/0 to its
	// read is the region's answer.
	missing bool
}

// probed is what the target is, for the summary's "probed".
func (t probeTarget) probed() string {
	if t.missing {
		return output.ProbedMissingItem
	}
	return output.ProbedItem
}

// probeItem returns the read operation of the probe: Options.ID and PartitionKey as
// given, or the probe item, found, created on first use, or missing. It fails only on
// what no region's health explains: no container given, or an answer that rules the
// probe item out (the container does not exist, the key may not read or write it).
func probeItem(ctx context.Context, errOut io.Writer, opts Options, regions, all []string, timeout time.Duration) (probeTarget, error) {
	op := engine.Operation{Kind: engine.OpRead, Database: opts.Database, Container: opts.Container, E2ETimeout: timeout}
	if op.Database == "" || op.Container == "" {
		return probeTarget{op: op}, usageErrorf("no database or container: give --database and --container (or set them in a profile), or use --account-only")
	}
	if opts.ID != "" {
		op.ID, op.PartitionKey = opts.ID, opts.PartitionKey
		return probeTarget{op: op}, nil
	}
	attempt, whole := setUpBounds(timeout)
	sctx, cancel := context.WithTimeout(ctx, whole)
	defer cancel()
	s := &itemSetUp{client: opts.Client, clock: opts.Clock, op: op, attempt: attempt, ttl: itemTTL(opts)}
	done, err := s.run(sctx, regions, all)
	target := probeTarget{op: s.op, created: s.created, missing: !done}
	if ctx.Err() != nil {
		return target, ctx.Err()
	}
	if err != nil {
		return target, err
	}
	switch {
	case s.created:
		after := "deleted when the probe ends (--cleanup=false keeps it)"
		if !opts.Cleanup {
			after = "kept: --cleanup=false"
		}
		fmt.Fprintf(errOut, "cosmosctl: created the probe item %q in %s/%s (partition key %s); %s\n", ItemID, op.Database, op.Container, s.op.PartitionKey.JSON(), after)
	case !done:
		fmt.Fprintf(errOut, "cosmosctl: could not set up the probe item %q in %s/%s: %s; probing reads of it anyway, and a 404/0 (not found) counts as the region's answer, not as an error\n", ItemID, op.Database, op.Container, s.why)
	}
	return target, nil
}

// itemTTL is the "ttl" of the probe item in seconds: an hour, so that an item a killed
// probe could not delete goes away by itself where the container has TTL on (it has no
// effect elsewhere); longer for a probe that may run longer, so that its item does not
// expire under it; none (0) for a probe that runs until interrupted.
func itemTTL(opts Options) int {
	const hour = 3600
	s := opts.Schedule
	bound := s.Duration
	if opts.DefaultTimeLimit {
		bound = 0 // within the hour: the count's own time, if any, below
	}
	if s.Count > 0 && s.Rate > 0 {
		byCount := time.Duration(float64(s.Count) / s.Rate * float64(time.Second))
		if bound == 0 || byCount < bound {
			bound = byCount
		}
	}
	if bound == 0 && s.Count == 0 {
		return 0
	}
	return hour + int(bound.Round(time.Second)/time.Second)
}

// cleanupBound bounds the deletion of the probe item at the end: a sick write region
// costs the probe this much at most, and one notice.
const cleanupBound = 2 * time.Second

// deleteItem deletes the probe item the probe created, through the write region, once
// and bounded by the attempt timeout, even when ctx has ended (Ctrl-C ends a probe, and
// the item should go with it). A failure is a notice, never the probe's error: the
// item's ttl removes it later where the container has TTL on.
func deleteItem(ctx context.Context, errOut io.Writer, client *engine.Client, op engine.Operation, timeout time.Duration) {
	bound := min(timeout, cleanupBound)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	del := op
	del.Kind, del.ExcludeRegions, del.E2ETimeout = engine.OpDelete, nil, bound
	_, err := client.Derive(nil, retries.Policy{}).Execute(ctx, del)
	if status, sub, _ := cosmos.Status(err); err == nil || (status == 404 && sub == 0) {
		return
	}
	fmt.Fprintf(errOut, "cosmosctl: could not delete the probe item %q from %s/%s (%s); its ttl removes it where the container has TTL on, or: cosmosctl delete %s --pk '%s'\n",
		op.ID, op.Database, op.Container, describe(err), op.ID, op.PartitionKey.JSON())
}

// itemSetUp finds or creates the probe item.
type itemSetUp struct {
	client  *engine.Client
	clock   clock.Clock
	op      engine.Operation // the probe's read, its item to be filled in
	attempt time.Duration
	ttl     int // the created item's "ttl" in seconds; 0: none
	// created: the item was upserted; why says what kept the set-up from completing.
	created bool
	why     string
}

// run finds the probe item or creates it; done is false when it could do neither, and
// why says why.
func (s *itemSetUp) run(ctx context.Context, regions, all []string) (done bool, err error) {
	paths, pathsErr := s.client.PartitionKeyPaths(ctx, s.op.Database, s.op.Container, s.attempt)
	if pathsErr != nil && ruledOut(pathsErr) {
		return false, asUsage(pathsErr)
	}
	levels := len(paths)
	if pathsErr != nil {
		// No region gave the container's definition in time: the probe item of a
		// container with one partition key path is the commonest guess, and reads of it
		// still tell each region's health.
		levels = 1
	}
	pk, err := itemKey(levels)
	if err != nil {
		return false, err
	}
	s.op.ID, s.op.PartitionKey = ItemID, pk

	found, readErr := s.find(ctx, all)
	if found {
		return true, nil
	}
	var unread string
	switch {
	case readErr == nil:
		unread = "it does not exist yet"
	case pathsErr == nil && ruledOut(readErr):
		return false, asUsage(readErr)
	default:
		unread = "no region could read it (" + readErr.Error() + ")"
	}
	if pathsErr != nil {
		s.why = fmt.Sprintf("its container's partition key paths could not be read from any region (%s), and %s; it is read with a one-level partition key", describe(pathsErr), unread)
		return false, nil
	}
	// Not found, or no region could say: an upsert creates it, and rewrites it
	// harmlessly if it was there.
	up := s.op
	up.Kind, up.Body, up.E2ETimeout = engine.OpUpsert, itemDocument(paths, s.ttl), s.attempt
	if _, err := s.client.Execute(ctx, up); err != nil {
		if ruledOut(err) {
			return false, fmt.Errorf("creating the probe item %q in %s/%s: %w (or probe an existing item with --id and --pk, or the endpoints with --account-only)", ItemID, s.op.Database, s.op.Container, asUsage(err))
		}
		s.why = fmt.Sprintf("%s, and creating it in the write region failed (%s)", unread, describe(err))
		return false, nil
	}
	s.created = true
	s.awaitReplication(ctx, regions, all)
	return true, nil
}

// find reads the probe item region by region, each read pinned to its region, never
// retried and bounded by the attempt timeout, as the engine hedges: the next region
// starts when the last one failed, or when it has not answered within a quarter of the
// attempt timeout. The first region that answers 200 (found) or 404/0 (not found, err
// nil) ends it; a healthy first region is the only one asked. When no region answers,
// err says what each got.
func (s *itemSetUp) find(ctx context.Context, all []string) (found bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pinned := s.client.Derive(nil, retries.Policy{})
	type answer struct {
		region string
		err    error
	}
	answers := make(chan answer, len(all))
	next, pending := 0, 0
	var timer clock.Timer
	var stagger <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	launch := func() {
		region := all[next]
		next, pending = next+1, pending+1
		go func() {
			read := s.op
			read.ExcludeRegions, read.E2ETimeout = without(all, region), s.attempt
			_, err := pinned.Execute(ctx, read)
			answers <- answer{region, err}
		}()
		if timer != nil {
			timer.Stop()
		}
		timer, stagger = nil, nil
		if next < len(all) {
			timer = s.clock.NewTimer(s.attempt / 4)
			stagger = timer.C()
		}
	}
	launch()
	var failed []string
	var first error
	for pending > 0 {
		select {
		case <-stagger:
			launch()
		case a := <-answers:
			pending--
			if a.err == nil {
				return true, nil
			}
			if status, sub, _ := cosmos.Status(a.err); status == 404 && sub == 0 {
				return false, nil
			}
			if first == nil || ruledOut(a.err) {
				first = a.err
			}
			failed = append(failed, a.region+" "+describe(a.err))
			if next < len(all) {
				launch()
			}
		}
	}
	return false, &regionsError{first: first, text: strings.Join(failed, ", ")}
}

// regionsError is what each region's read got when none answered.
type regionsError struct {
	first error // the one to classify by
	text  string
}

func (e *regionsError) Error() string { return e.text }
func (e *regionsError) Unwrap() error { return e.first }

// awaitReplication waits, briefly, until the newly created probe item can be read in
// every probed region, so that replication lag is not reported as 404s. A region that
// answers anything but a 404 (or nothing: each read is bounded by the attempt timeout)
// is not waited for; whatever is still missing after the wait shows in the results.
func (s *itemSetUp) awaitReplication(ctx context.Context, regions, all []string) {
	ctx, cancel := context.WithTimeout(ctx, replicationWait)
	defer cancel()
	client := s.client.Derive(nil, retries.Policy{})
	var wg sync.WaitGroup
	for _, region := range regions {
		wg.Go(func() {
			read := s.op
			read.ExcludeRegions, read.E2ETimeout = without(all, region), s.attempt
			for {
				_, err := client.Execute(ctx, read)
				// 404/0 (not there yet) and 404/1002 (this region's replica is behind).
				if status, _, _ := cosmos.Status(err); status != 404 {
					return
				}
				t := s.clock.NewTimer(100 * time.Millisecond)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C():
				}
			}
		})
	}
	wg.Wait()
}

// ruledOut reports an answer that says something about the request or the account
// rather than about a region's health: no container, a key that may not do this, a
// request the service refuses. Another region or another try would get the same.
func ruledOut(err error) bool {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return true
	}
	status, sub, ok := cosmos.Status(err)
	if !ok {
		return false
	}
	switch status {
	case 400, 401, 405, 409, 412, 413:
		return true
	case 404:
		// 404/1002: this region's replica is behind, another may have it.
		return sub != cosmos.SubReadSessionNotAvailable
	case 403:
		return sub != cosmos.SubWriteForbidden
	}
	return false
}

// describe is an error in a few words: its status, "timed out" or "no answer".
func describe(err error) string {
	var te *engine.TimeoutError
	var ne *cosmos.NetworkError
	switch status, sub, ok := cosmos.Status(err); {
	case ok:
		return fmt.Sprintf("%d/%d", status, sub)
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.As(err, &ne):
		return "no answer"
	}
	return err.Error()
}

// itemKey is the probe item's partition key in a container with n partition key paths:
// ItemID at every level.
func itemKey(n int) (cosmos.PartitionKey, error) {
	values := make([]any, n)
	for i := range values {
		values[i] = ItemID
	}
	return cosmos.PK(values...)
}

// itemDocument is the probe item: its id, the same value at every partition key path,
// and its ttl in seconds (none when 0).
func itemDocument(paths []string, ttl int) []byte {
	doc := map[string]any{"id": ItemID, "purpose": "cosmosctl probe: safe to delete"}
	if ttl > 0 {
		doc["ttl"] = ttl
	}
	for _, path := range paths {
		cur := doc
		segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for i, seg := range segs {
			if i == len(segs)-1 {
				cur[seg] = ItemID
				break
			}
			next, ok := cur[seg].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[seg] = next
			}
			cur = next
		}
	}
	b, _ := json.Marshal(doc)
	return b
}
