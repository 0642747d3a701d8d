package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/hedgetest"
	"github.com/cosmosctl/cosmosctl/output"
)

// The replica-move scenario of hedge-test is hedgetest's (see hedgetest.Mover); this is
// its wiring and its table.

// noReplicaHealthSuffix names the comparison runs in the strategies table.
const noReplicaHealthSuffix = hedgetest.NoReplicaHealthSuffix

// hedgeTestReplicaMove is the replica_move section of -o json.
type hedgeTestReplicaMove = hedgetest.MoveSection

// runReplicaMove runs every strategy twice through a replica move: health-aware, then
// without replica health.
func (o *hedgeTestOptions) runReplicaMove(ctx context.Context, io *IOStreams, sess *session, w hedgetest.Workload, specs []hedgetest.Spec) ([]hedgetest.Result, *hedgeTestReplicaMove, error) {
	m, err := hedgetest.NewMover(ctx, sess.embedded, sess.client, sess.settings.PreferredRegions, w)
	if err != nil {
		return nil, nil, asUsage(err)
	}
	progress := func(name string) func(int) { return o.progress(io, name, "reads") }
	ended := func() {
		if io.ErrTTY {
			fmt.Fprint(io.ErrOut, "\r\033[K")
		}
	}
	results, move, err := m.RunReplicaMove(ctx, w, specs, progress, ended)
	return results, move, asUsage(err)
}

// writeReplicaMove writes the replica-move section after the strategies table.
func (o *hedgeTestOptions) writeReplicaMove(w io.Writer, st output.Styles, move *hedgeTestReplicaMove) error {
	fmt.Fprintf(w, "\nreplica move: in %s a secondary replica of each of the %d partition key range(s) the items live in answers 410 from %.0f%% into each run; the gateway hands out its successor %s later\n",
		move.Region, move.MovedPerRun, move.MoveAtPct, time.Duration(move.RefreshDelayMs)*time.Millisecond)
	// On a narrow terminal the headers shorten and the strategy drops the "(no replica
	// health)" that the REPLICA HEALTH column says; then the maximum goes, and the count
	// sent after the 410 is cut.
	t := output.NewTableOf(w, st,
		output.Column{Header: "STRATEGY", Key: true, Priority: 9, Min: 12, Abbrev: withoutReplicaHealthSuffix},
		output.Column{Header: "REPLICA HEALTH", Short: "HEALTH", Key: true},
		output.Column{Header: "READS IN WINDOW", Short: "READS", Priority: 3, Right: true},
		output.Column{Header: "SENT TO A MOVED REPLICA AFTER ITS 410", Short: "AFTER ITS 410", Key: true, Priority: 8, Min: 14},
		output.Column{Header: "P50", Priority: 2, Right: true},
		output.Column{Header: "P99", Key: true, Right: true},
		output.Column{Header: "MAX", Priority: 1, Right: true},
	)
	for _, r := range move.Runs {
		health := "off"
		if r.ReplicaHealth {
			health = "on"
		}
		t.Append(r.Strategy, health, fmt.Sprint(r.ReadsInWindow), afterText(r.AfterFirst410, r.AfterFirst410Pct, r.InFlight),
			output.HumanDuration(msDur(r.P50Ms)), output.HumanDuration(msDur(r.P99Ms)), output.HumanDuration(msDur(r.MaxMs)))
	}
	if err := t.Render(); err != nil {
		return err
	}
	on, off := move.HealthAware, move.WithoutHealth
	_, err := fmt.Fprintf(w, "reads sent to the moved replica after its first 410: health-aware %d of %d (%.1f%%), without health %d of %d (%.1f%%); p99 during the window %s vs %s\n",
		on.AfterFirst410, on.Reads, on.AfterFirst410Pct, off.AfterFirst410, off.Reads, off.AfterFirst410Pct,
		output.HumanDuration(msDur(on.P99Ms)), output.HumanDuration(msDur(off.P99Ms)))
	return err
}

// withoutReplicaHealthSuffix is a strategy's name without the suffix of its run without
// replica health, for a table whose REPLICA HEALTH column says it.
func withoutReplicaHealthSuffix(name string) string {
	return strings.TrimSuffix(name, noReplicaHealthSuffix)
}

func afterText(n int, pct float64, inFlight int) string {
	s := fmt.Sprintf("%d (%.1f%%)", n, pct)
	if inFlight > 0 {
		s = fmt.Sprintf("%d (%.1f%%, %d already in flight)", n, pct, inFlight)
	}
	return s
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
