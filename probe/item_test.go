package probe

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/workload"
)

func TestSetUpBounds(t *testing.T) {
	for _, tc := range []struct {
		timeout, attempt, whole time.Duration
	}{
		{300 * time.Millisecond, time.Second, 3 * time.Second},
		{1500 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second},
		{DefaultTimeout, 2 * time.Second, DefaultTimeout},
		{30 * time.Second, 2 * time.Second, 10 * time.Second},
	} {
		if attempt, whole := setUpBounds(tc.timeout); attempt != tc.attempt || whole != tc.whole {
			t.Errorf("timeout %s: attempts %s, whole %s; want %s and %s", tc.timeout, attempt, whole, tc.attempt, tc.whole)
		}
	}
}

func TestItemDocumentHasTheIDAtEveryPartitionKeyPath(t *testing.T) {
	got := string(itemDocument([]string{"/tenant", "/meta/user"}, 3600))
	if got != `{"id":"cosmosctl-probe","meta":{"user":"cosmosctl-probe"},"purpose":"cosmosctl probe: safe to delete","tenant":"cosmosctl-probe","ttl":3600}` {
		t.Fatalf("%s", got)
	}
	if got := string(itemDocument([]string{"/pk"}, 0)); strings.Contains(got, "ttl") {
		t.Fatalf("a ttl of 0 is none: %s", got)
	}
}

func TestItemTTLOutlivesTheProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want int
	}{
		{"a count in a closed loop: an hour", Options{Schedule: workload.Schedule{Count: 100, Concurrency: 4}}, 3600},
		{"a duration: an hour more than it", Options{Schedule: workload.Schedule{Duration: 2 * time.Hour, Concurrency: 4}}, 3600 + 7200},
		{"a count at a rate: an hour more than it takes", Options{Schedule: workload.Schedule{Count: 600, Rate: 10, Concurrency: 4}}, 3600 + 60},
		{"whichever of count and duration ends first", Options{Schedule: workload.Schedule{Count: 600, Rate: 10, Duration: 10 * time.Second}}, 3600 + 10},
		{"until interrupted: none", Options{Watch: true, Schedule: workload.Schedule{Concurrency: 4}}, 0},
	} {
		if got := itemTTL(tc.opts); got != tc.want {
			t.Errorf("%s: ttl %d, want %d", tc.name, got, tc.want)
		}
	}
}

// account starts a three-region emulator with container app/items (partition key /pk).
func account(t *testing.T) (*emulator.Server, *engine.Client) {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	t.Cleanup(tr.HTTP.CloseIdleConnections)
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return srv, c
}

// counter is a fault rule that changes nothing and counts the reads of a region.
func counter(t *testing.T, srv *emulator.Server, region string) func() int {
	t.Helper()
	r, err := srv.AddFault(faults.Rule{Region: region, Operations: []string{faults.OpRead}, Effect: faults.EffectDelay,
		Delay: faults.Distribution{Kind: faults.KindFixed, Value: 0}})
	if err != nil {
		t.Fatal(err)
	}
	return func() int {
		for _, x := range srv.Faults().Rules() {
			if x.ID == r.ID {
				return x.Fired
			}
		}
		return -1
	}
}

func TestTheExistenceReadAsksTheNextRegionOnlyWhenOneFails(t *testing.T) {
	regions := []string{"East US", "West US", "North Europe"}
	for _, tc := range []struct {
		name       string
		sick       *faults.Rule
		westReads  int
		northReads int
	}{
		{"a healthy first region is the only one asked", nil, 0, 0},
		{"a 503 from the first region asks the next at once", &faults.Rule{Effect: faults.EffectStatus, Status: 503}, 1, 0},
		{"a hung first region: the next is asked a quarter of the attempt timeout later", &faults.Rule{Effect: faults.EffectHang}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := account(t)
			var notices bytes.Buffer
			opts := Options{Client: c, Database: "app", Container: "items", Clock: clock.Real{}}
			if _, err := probeItem(context.Background(), &notices, opts, regions, regions, time.Second); err != nil {
				t.Fatalf("creating the probe item: %v", err)
			}
			if tc.sick != nil {
				r := *tc.sick
				r.Region, r.Operations = "East US", []string{faults.OpRead}
				if _, err := srv.AddFault(r); err != nil {
					t.Fatal(err)
				}
			}
			west, north := counter(t, srv, "West US"), counter(t, srv, "North Europe")
			// 4s: the next region is asked after 1s, which no healthy region's answer
			// takes, however loaded the machine.
			s := &itemSetUp{client: c, clock: clock.Real{}, attempt: 4 * time.Second,
				op: engine.Operation{Kind: engine.OpRead, Database: "app", Container: "items", ID: ItemID}}
			s.op.PartitionKey, _ = itemKey(1)
			found, err := s.find(context.Background(), regions)
			if !found || err != nil {
				t.Fatalf("found %v, err %v", found, err)
			}
			if w, n := west(), north(); w != tc.westReads || n != tc.northReads {
				t.Fatalf("West US read %d times, North Europe %d; want %d and %d", w, n, tc.westReads, tc.northReads)
			}
		})
	}
}

func TestTheExistenceReadSaysWhatEachRegionGotWhenNoneAnswers(t *testing.T) {
	srv, c := account(t)
	for _, r := range []faults.Rule{
		{Region: "East US", Effect: faults.EffectStatus, Status: 503},
		{Region: "West US", Effect: faults.EffectStatus, Status: 429, SubStatus: 3200},
		{Region: "North Europe", Effect: faults.EffectHang},
	} {
		r.Operations = []string{faults.OpRead}
		if _, err := srv.AddFault(r); err != nil {
			t.Fatal(err)
		}
	}
	regions := []string{"East US", "West US", "North Europe"}
	s := &itemSetUp{client: c, clock: clock.Real{}, attempt: 200 * time.Millisecond,
		op: engine.Operation{Kind: engine.OpRead, Database: "app", Container: "items", ID: ItemID}}
	s.op.PartitionKey, _ = itemKey(1)
	found, err := s.find(context.Background(), regions)
	if found || err == nil || ruledOut(err) {
		t.Fatalf("found %v, err %v: no region could say", found, err)
	}
	for _, want := range []string{"East US 503/0", "West US 429/3200", "North Europe timed out"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// None could say, the write region takes the upsert: the set-up completes.
	var notices bytes.Buffer
	opts := Options{Client: c, Database: "app", Container: "items", Clock: clock.Real{}}
	target, err := probeItem(context.Background(), &notices, opts, regions, regions, 200*time.Millisecond)
	if op := target.op; err != nil || op.ID != ItemID || !strings.Contains(notices.String(), "created the probe item") {
		t.Fatalf("op %+v, err %v, notices %q", op, err, notices.String())
	}
}
