package hedgetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
)

// read is a read sent at t0+sent whose attempts went to the given replicas.
func read(t0 time.Time, sent time.Duration, attempts ...engine.Attempt) Read {
	return Read{Intended: t0.Add(sent), Sent: t0.Add(sent), Latency: 3 * time.Millisecond,
		Result: &engine.Result{StatusCode: 200, Diagnostics: &engine.Diagnostics{Attempts: attempts}}}
}

func attempt(replica string, start, dur time.Duration, status int, health string) engine.Attempt {
	return engine.Attempt{Replica: replica, Start: start, Duration: dur, StatusCode: status, ReplicaHealth: health}
}

func TestMoveWindowCountsRequestsToAMovedReplicaAfterItsFirst410(t *testing.T) {
	const moved, other = "http://r/replicas/2s/", "http://r/replicas/3s/"
	t0 := time.Now()
	ms := time.Millisecond
	reads := []Read{
		// Before the move: no window, no count.
		read(t0, 0, attempt(moved, 0, ms, 200, "connected")),
		// The first 410 arrives at 11ms; the read goes on to another replica.
		read(t0, 10*ms, attempt(moved, 0, ms, 410, "connected"), attempt(other, ms, ms, 200, "connected")),
		// Sent at 11.5ms but routed before the cache marked the replica: in flight.
		read(t0, 11*ms+500*time.Microsecond, attempt(moved, 0, ms, 410, "connected"), attempt(other, ms, ms, 200, "connected")),
		// Routed knowing it had failed.
		read(t0, 20*ms, attempt(moved, 0, ms, 410, "unhealthy"), attempt(other, ms, ms, 200, "connected")),
		read(t0, 30*ms, attempt(other, 0, ms, 200, "connected")),
		// After the gateway handed out the successor: outside the window.
		read(t0, 60*ms, attempt(moved, 0, ms, 410, "unhealthy-pending")),
	}
	for _, tc := range []struct {
		name                   string
		healthAware            bool
		after, inFlight, reads int
	}{
		{"health-aware: routed after the mark counts, routed before is in flight", true, 1, 1, 4},
		{"without health the send time decides", false, 2, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &MoveWindow{HealthAware: tc.healthAware}
			w.Observe(reads[0]) // not armed yet
			w.Moved([]string{moved}, t0.Add(5*ms), t0.Add(50*ms))
			for _, r := range reads {
				w.Observe(r)
			}
			rep := w.Report(t0.Add(100 * ms))
			if rep.AfterFirst410 != tc.after || rep.InFlight != tc.inFlight || rep.Reads != tc.reads || rep.Gone != 4 ||
				rep.Window != 45*ms || rep.Moved != 1 || rep.Stats.Count() != tc.reads {
				t.Fatalf("report %+v", rep)
			}
			if pct := rep.AfterFirst410Pct(); pct != 100*float64(tc.after)/float64(tc.reads) {
				t.Fatalf("share %v", pct)
			}
		})
	}
	t.Run("the run's end closes the window", func(t *testing.T) {
		w := &MoveWindow{}
		w.Moved([]string{moved}, t0, t0.Add(time.Second))
		if rep := w.Report(t0.Add(20 * ms)); rep.Window != 20*ms {
			t.Fatalf("window %v", rep.Window)
		}
	})
}

func TestRunDisruptsOnceAndObservesEveryRead(t *testing.T) {
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	defer tr.HTTP.CloseIdleConnections()
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var items []Item
	for i := range 3 {
		id := fmt.Sprint(i)
		pk, _ := cosmos.PK(id)
		if _, err := c.Execute(ctx, engine.Operation{Kind: engine.OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"` + id + `","pk":"` + id + `"}`)}); err != nil {
			t.Fatal(err)
		}
		items = append(items, Item{ID: id, PartitionKey: pk})
	}
	for _, at := range []int{0, 4} {
		var observed, disrupted, doneAtDisrupt int
		w := Workload{Client: c, Database: "db", Container: "c", Items: items, Count: 10, Concurrency: 2, E2ETimeout: 5 * time.Second,
			Observe: func(r Read) {
				observed++
				if r.Sent.Before(r.Intended) || r.Result == nil || len(r.Result.Diagnostics.Attempts) == 0 {
					t.Errorf("read %+v", r)
				}
			},
			DisruptAfter: at,
			Disrupt:      func() { disrupted++; doneAtDisrupt = observed },
		}
		if _, err := Run(ctx, w, Spec{Name: "none"}); err != nil {
			t.Fatal(err)
		}
		if observed != 10 || disrupted != 1 || doneAtDisrupt != at {
			t.Fatalf("DisruptAfter %d: observed %d, disrupted %d times after %d reads", at, observed, disrupted, doneAtDisrupt)
		}
	}
}
