package hedgetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/health"
)

// writeRegionDown starts an emulator (multi-write or not), a client that knows its
// topology and container, and then takes the write region down.
func writeRegionDown(t *testing.T, multiWrite bool) (*emulator.Server, Writes) {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{MultiWrite: multiWrite,
		Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	t.Cleanup(tr.HTTP.CloseIdleConnections)
	hs, err := health.New(health.Config{}, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr, Health: hs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	w := Writes{Client: c, Database: "db", Container: "c", Count: 12, Concurrency: 3, E2ETimeout: 5 * time.Second}
	if err := w.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AddFault(faults.Rule{Region: srv.Regions()[0].Name, Effect: faults.EffectRefuse}); err != nil {
		t.Fatal(err)
	}
	return srv, w
}

func TestWriteRegionDownScenarioWrites(t *testing.T) {
	ctx := context.Background()
	t.Run("a single-write account fails every write, fast, saying why", func(t *testing.T) {
		_, w := writeRegionDown(t, false)
		sum, err := w.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Account != "single-write" || sum.MultiWrite() || strings.Join(sum.WriteRegions, ",") != "East US" ||
			sum.Attempted != 12 || sum.Written != 0 || sum.Failed != 12 || sum.Timeouts != 0 || len(sum.WrittenByRegion) != 0 {
			t.Fatalf("summary %+v", sum)
		}
		// The emulator refuses by resetting the connections it accepts, so a client sees
		// some writes fail before they were sent and some after (ambiguous); every
		// message says the write region did not take the write, and where reads work.
		n := 0
		for _, e := range sum.Errors {
			n += e.Count
			if !strings.Contains(e.Message, "the write region East US did not take the write") ||
				!strings.Contains(e.Message, "reads still work from West US, North Europe") {
				t.Fatalf("unclear message %q", e.Message)
			}
		}
		if n != 12 || len(sum.Errors) > 4 {
			t.Fatalf("the messages must group the failures: %+v", sum.Errors)
		}
		// Failing fast: well inside the end-to-end timeout (a loose bound; the point is
		// that nobody waits the 5 s out).
		if sum.FailedMaxMs <= 0 || sum.FailedMaxMs >= 4000 || sum.MaxMs != sum.FailedMaxMs || sum.P99Ms > sum.MaxMs {
			t.Fatalf("latencies %+v", sum)
		}
	})
	t.Run("a multi-write account takes every write in another region", func(t *testing.T) {
		srv, w := writeRegionDown(t, true)
		sum, err := w.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A write whose connection was reset after it was sent may have been applied and
		// is not retried (write retries are off); region health moves East US last after
		// its sixth write failure, so of the 12 writes, 3 at a time, at most 8 fail.
		if sum.Account != "multi-write" || !sum.MultiWrite() || len(sum.WriteRegions) != 3 ||
			sum.Attempted != 12 || sum.Written < 4 || sum.Written+sum.Failed != 12 || sum.Timeouts != 0 {
			t.Fatalf("summary %+v", sum)
		}
		for _, e := range sum.Errors {
			if !strings.Contains(e.Message, "after the request was sent") {
				t.Fatalf("only an ambiguous write may fail on a multi-write account: %+v", sum.Errors)
			}
		}
		total := 0
		for region, n := range sum.WrittenByRegion {
			if region == "East US" || region == "unknown region" {
				t.Fatalf("%d writes credited to %s: %+v", n, region, sum.WrittenByRegion)
			}
			total += n
		}
		if total != sum.Written || len(sum.Regions()) == 0 || sum.P99Ms <= 0 {
			t.Fatalf("summary %+v", sum)
		}
		// The writes are real: the items are there, under their scratch names.
		srv.Faults().Clear()
		found := 0
		for i := range 12 {
			pk, _ := cosmos.PK(WriteItemID(i))
			res, err := w.Client.Execute(ctx, engine.Operation{Kind: engine.OpRead, Database: "db", Container: "c", ID: WriteItemID(i), PartitionKey: pk})
			if err == nil && res.StatusCode == 200 && strings.Contains(string(res.Body), `"id":"cosmosctl-hedge-test-write-`) {
				found++
			}
		}
		if found < sum.Written {
			t.Fatalf("%d items written, %d found", sum.Written, found)
		}
	})
	t.Run("a cancelled phase returns what ran", func(t *testing.T) {
		_, w := writeRegionDown(t, true)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		sum, err := w.Run(cctx)
		if err == nil || sum.Attempted != 0 || sum.P99Ms != 0 {
			t.Fatalf("%v %+v", err, sum)
		}
	})
}

func TestWriteErrorsGroupAcrossConnections(t *testing.T) {
	a := errors.New("http://127.0.0.1:8081: read tcp 127.0.0.1:51234->127.0.0.1:8081: read: connection reset by peer (after the request was sent)")
	b := errors.New("http://127.0.0.1:8081: read tcp 127.0.0.1:40001->127.0.0.1:8081: read: connection reset by peer (after the request was sent)")
	c := errors.New("http://[::1]:8081: read tcp [::1]:40001->[::1]:8081: read: connection reset by peer")
	if distinctMessage(a) != distinctMessage(b) || strings.Contains(distinctMessage(a), "51234") ||
		distinctMessage(a) != "http://127.0.0.1:8081: read tcp 127.0.0.1:8081: read: connection reset by peer (after the request was sent)" {
		t.Fatalf("%q vs %q", distinctMessage(a), distinctMessage(b))
	}
	if got := distinctMessage(c); got != "http://[::1]:8081: read tcp [::1]:8081: read: connection reset by peer" {
		t.Fatalf("%q", got)
	}
}

// A dropped connection is one cause whichever system call saw it drop, so the summary
// groups the failures by what happened: one line for before the request was sent, one
// for after.
func TestDistinctMessageGroupsDroppedConnections(t *testing.T) {
	wrap := func(sent bool, err error) error {
		return fmt.Errorf("the write region East US did not take the write (%w)", &cosmos.NetworkError{Endpoint: "http://127.0.0.1:8081", Sent: sent, Err: err})
	}
	opErr := func(op string, err error) error {
		return &net.OpError{Op: op, Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8081}, Err: os.NewSyscallError(op, err)}
	}
	after := map[string]bool{}
	for _, err := range []error{
		wrap(true, opErr("read", syscall.ECONNRESET)),
		wrap(true, opErr("write", syscall.EPIPE)),
		wrap(true, fmt.Errorf("readLoopPeekFailLocked: %w", opErr("read", syscall.ECONNRESET))),
		wrap(true, &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}),
		wrap(true, io.ErrUnexpectedEOF),
	} {
		after[distinctMessage(err)] = true
	}
	if len(after) != 1 {
		t.Fatalf("dropped connections after sending read as %d messages: %v", len(after), after)
	}
	for m := range after {
		if m != "the write region East US did not take the write (http://127.0.0.1:8081: the connection was dropped (after the request was sent))" {
			t.Fatalf("message %q", m)
		}
	}
	before := distinctMessage(wrap(false, opErr("dial", syscall.ECONNRESET)))
	if !strings.Contains(before, "the connection was dropped (before the request was sent)") {
		t.Fatalf("message %q", before)
	}
	// Anything else keeps its own words.
	refused := distinctMessage(wrap(false, opErr("dial", syscall.ECONNREFUSED)))
	if !strings.Contains(refused, "connection refused") {
		t.Fatalf("message %q", refused)
	}
}
