package cmd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// lagAccount is the test account with a lease container beside the monitored one,
// partitioned by /id as both SDKs require of a lease container.
func lagAccount(t *testing.T) *emulator.Server {
	t.Helper()
	return testAccount(t, func(c *emulator.Config) {
		c.Databases[0].Containers = append(c.Databases[0].Containers, emulator.ContainerConfig{ID: "leases", PartitionKey: []string{"/id"}})
	})
}

// writeItems upserts n items into the monitored container's range 0 (["", "10") of
// the emulator's four; partition key p1 lives there), ids prefix-0 …
func writeItems(t *testing.T, prefix string, n int) {
	t.Helper()
	for i := range n {
		if r := cosmosctl(t, fmt.Sprintf(`{"id":"%s-%d","pk":"p1"}`, prefix, i), "upsert", "-f", "-"); r.code != 0 {
			t.Fatalf("writing %s-%d: %+v", prefix, i, r)
		}
	}
}

// feedPosition is the monitored container's range 0's change feed etag now: what a
// processor that had read everything would checkpoint.
func feedPosition(t *testing.T, srv *emulator.Server) string {
	t.Helper()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	h := http.Header{}
	h.Set(cosmos.HeaderAIM, "Incremental Feed")
	h.Set(cosmos.HeaderIfNoneMatch, "*")
	h.Set(cosmos.HeaderPartitionKeyRangeID, "0")
	resp, err := tr.Do(context.Background(), srv.Endpoint(), &cosmos.Request{Method: http.MethodGet, Path: cosmos.ItemsPath("app", "items"), Header: h})
	if err != nil || resp.ETag == "" {
		t.Fatalf("reading the feed's position: %v %+v", err, resp)
	}
	return resp.ETag
}

// putLease writes a document into the lease container.
func putLease(t *testing.T, doc string) {
	t.Helper()
	if r := cosmosctl(t, doc, "upsert", "--container", "leases", "-f", "-"); r.code != 0 {
		t.Fatalf("writing lease %s: %+v", doc, r)
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// The lease documents in each SDK's shape (leases/lease.go cites the sources): etag is
// the continuation's etag, at the time's timestamp.
func dotnetLease(id, owner, etag string, at time.Time) string {
	return fmt.Sprintf(`{"id":%q,"version":0,"LeaseToken":"0","FeedRange":{"Range":{"min":"","max":"10"}},"Owner":%s,"ContinuationToken":%s,"properties":{},"Mode":"Incremental Feed","timestamp":%q}`,
		id, jsonString(owner), jsonString(etag), at.UTC().Format("2006-01-02T15:04:05.0000000Z"))
}

func dotnetEPKLease(id, owner, etag string, at time.Time) string {
	return fmt.Sprintf(`{"id":%q,"version":1,"LeaseToken":"-10","FeedRange":{"Range":{"min":"","max":"10"}},"Owner":%s,"ContinuationToken":%s,"properties":{},"Mode":"Incremental Feed","timestamp":%q}`,
		id, jsonString(owner), jsonString(etag), at.UTC().Format(time.RFC3339Nano))
}

func javaLease(id, owner, etag string, at time.Time) string {
	return fmt.Sprintf(`{"id":%q,"LeaseToken":"0","ContinuationToken":%s,"timestamp":%q,"Owner":%s}`,
		id, jsonString(etag), at.UTC().Format("2006-01-02T15:04:05.000Z"), jsonString(owner))
}

func javaEPKLease(id, owner, etag string, at time.Time) string {
	state := `{"V":1,"Rid":"items-rid","Mode":"INCREMENTAL","StartFrom":{"Type":"BEGINNING"},"Continuation":{"V":1,"Rid":"items-rid","Continuation":[{"token":` +
		jsonString(etag) + `,"range":{"min":"","max":"10"}}],"Range":{"min":"","max":"10"}}}`
	return fmt.Sprintf(`{"id":%q,"LeaseToken":"-10","ContinuationToken":%q,"timestamp":%q,"Owner":%s,"version":1,"feedRange":{"Range":{"min":"","max":"10","isMinInclusive":true,"isMaxInclusive":false}}}`,
		id, base64.StdEncoding.EncodeToString([]byte(state)), at.UTC().Format(time.RFC3339Nano), jsonString(owner))
}

func lagJSON(t *testing.T, r runResult) lagReport {
	t.Helper()
	var rep lagReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("changes lag -o json printed %q (exit %d, stderr %s): %v", r.out, r.code, r.errOut, err)
	}
	return rep
}

func leaseByID(t *testing.T, rep lagReport, id string) lagLease {
	t.Helper()
	for _, l := range rep.Leases {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("no lease %s in %+v", id, rep.Leases)
	return lagLease{}
}

// TestChangesLagEstimatesAsTheSDKsDo: leases of both SDKs, checkpointed three writes in,
// with five writes since, lag 5 each; one checkpointed at the end lags 0; one not renewed
// for ten minutes is stuck; one without an owner is unowned; the store's .info and
// .lock documents are skipped.
func TestChangesLagEstimatesAsTheSDKsDo(t *testing.T) {
	srv := lagAccount(t)
	writeItems(t, "before", 3)
	checkpoint := feedPosition(t, srv)
	writeItems(t, "after", 5)
	end := feedPosition(t, srv)
	now, old := time.Now(), time.Now().Add(-10*time.Minute)
	prefix := "orders-procacct.documents.azure.com_AAAA_AAAAAAAAAAA="
	putLease(t, `{"id":"`+prefix+`.info"}`)
	putLease(t, `{"id":"`+prefix+`.lock","ttl":60}`)
	putLease(t, dotnetLease(prefix+"..0", "host-1", checkpoint, now))
	putLease(t, dotnetEPKLease("orders-epk..-10", "host-2", checkpoint, now))
	putLease(t, javaLease("orders-java..0", "worker-a", checkpoint, old))
	putLease(t, javaEPKLease("orders-javaepk..-10", "worker-b", checkpoint, now))
	putLease(t, dotnetLease("orders-current..0", "host-3", end, now))
	putLease(t, dotnetLease("orders-released..0", "", checkpoint, now))
	putLease(t, dotnetLease("billing..0", "host-9", checkpoint, now))

	r := cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "--lease-prefix", "orders", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s %s", r.code, r.out, r.errOut)
	}
	validate(t, "changes-lag", r.out, false)
	rep := lagJSON(t, r)
	for _, tc := range []struct {
		id    string
		lag   int64
		state string
	}{
		{prefix + "..0", 5, "ok"},
		{"orders-epk..-10", 5, "ok"},
		{"orders-java..0", 5, "stuck"},
		{"orders-javaepk..-10", 5, "ok"},
		{"orders-current..0", 0, "ok"},
		{"orders-released..0", 5, "unowned"},
	} {
		l := leaseByID(t, rep, tc.id)
		if l.EstimatedLag == nil || *l.EstimatedLag != tc.lag || l.State != tc.state || l.Error != nil {
			t.Errorf("%s: lag %v, state %s, error %+v; want %d, %s", tc.id, deref(l.EstimatedLag), l.State, l.Error, tc.lag, tc.state)
		}
	}
	if len(rep.Leases) != 6 || rep.TotalLag != 25 || rep.Stuck != 1 || rep.Unowned != 1 || rep.Errors != 0 {
		t.Errorf("totals: %d leases, lag %d, %d stuck, %d unowned, %d errors", len(rep.Leases), rep.TotalLag, rep.Stuck, rep.Unowned, rep.Errors)
	}
	if rep.OldestLease == nil || *rep.OldestLease != "orders-java..0" || *rep.OldestCheckpointAgeMs < 9*60*1000 {
		t.Errorf("oldest: %v %v", rep.OldestLease, rep.OldestCheckpointAgeMs)
	}
	if len(rep.Skipped) != 3 { // .info, .lock, and billing's lease (another prefix)
		t.Errorf("skipped %+v, want the .info, the .lock and billing's lease", rep.Skipped)
	}

	// The table: one row a lease, and the totals.
	r = cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "--lease-prefix", "orders-java.")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != ExitOK || len(lines) != 3 || !strings.HasPrefix(lines[0], "LEASE") ||
		!strings.Contains(lines[1], "worker-a") || !strings.Contains(lines[1], " 5 ") || !strings.Contains(lines[1], "stuck") ||
		!regexp.MustCompile(`^1 lease, total lag 5, oldest checkpoint 10m\ds ago \(orders-java\.\.0\); 1 stuck \(not renewed for more than 1m0s\)$`).MatchString(lines[2]) {
		t.Errorf("the table (exit %d):\n%s%s", r.code, r.out, r.errOut)
	}
	// --fail-on-stuck: the report, then exit 10; a longer expiry makes it fine.
	r = cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "--lease-prefix", "orders", "--fail-on-stuck")
	if r.code != ExitThresholdBreach || !strings.Contains(r.out, "stuck") || !strings.Contains(r.errOut, "1 lease stuck") {
		t.Errorf("--fail-on-stuck with a stuck lease: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	r = cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "--lease-prefix", "orders", "--fail-on-stuck", "--expiry", "1h", "-o", "json")
	if rep := lagJSON(t, r); r.code != ExitOK || rep.Stuck != 0 {
		t.Errorf("--expiry 1h: exit %d, %d stuck", r.code, rep.Stuck)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestChangesLagReportsABadLeaseOnItsRow: a continuation neither SDK writes is that
// lease's error; the others are still estimated, and the exit code says one was not.
func TestChangesLagReportsABadLeaseOnItsRow(t *testing.T) {
	srv := lagAccount(t)
	writeItems(t, "a", 2)
	checkpoint := feedPosition(t, srv)
	writeItems(t, "b", 1)
	putLease(t, dotnetLease("p..0", "host-1", checkpoint, time.Now()))
	putLease(t, `{"id":"p..1","LeaseToken":"0","Owner":"host-2","ContinuationToken":"not a continuation!","timestamp":"`+time.Now().UTC().Format(time.RFC3339)+`"}`)
	r := cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "-o", "json")
	validate(t, "changes-lag", r.out, false)
	rep := lagJSON(t, r)
	if r.code != ExitError || rep.Errors != 1 || rep.TotalLag != 1 {
		t.Fatalf("exit %d, %d errors, lag %d: %s", r.code, rep.Errors, rep.TotalLag, r.errOut)
	}
	if l := leaseByID(t, rep, "p..1"); l.EstimatedLag != nil || l.Error == nil || !strings.Contains(l.Error.Message, "not one either SDK writes") {
		t.Errorf("the bad lease: %+v %+v", l, l.Error)
	}
	r = cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "--diagnostics")
	if !strings.Contains(r.errOut, "poll range 0 for lease p..0: 200, 1 change") {
		t.Errorf("--diagnostics: %s", r.errOut)
	}
	if r.code != ExitError || !strings.Contains(r.out, "not one either SDK writes") || !strings.Contains(r.errOut, "lease p..1 could not be estimated") {
		t.Errorf("the table: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
}

func TestChangesLagInputErrors(t *testing.T) {
	lagAccount(t)
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"changes", "lag"}, ExitUsage, "give --lease-container NAME"},
		{[]string{"changes", "lag", "--lease-container", "leases", "--expiry", "0s"}, ExitUsage, "--expiry must be more than 0"},
		{[]string{"changes", "lag", "--lease-container", "nope"}, ExitNotFound, "the lease container app/nope does not exist: give the processor's lease container with --lease-container"},
		{[]string{"changes", "lag", "extra", "--lease-container", "leases"}, ExitUsage, ""},
	} {
		r := cosmosctl(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.errOut, tc.says) || strings.Count(strings.TrimSpace(r.errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, want %d; stderr %q, want one line with %q", tc.args, r.code, tc.code, r.errOut, tc.says)
		}
	}
	// An empty lease container: no leases, said on stderr, exit 0.
	r := cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "-o", "json")
	if rep := lagJSON(t, r); r.code != ExitOK || len(rep.Leases) != 0 || !strings.Contains(r.errOut, "no lease in app/leases") {
		t.Errorf("an empty lease container: exit %d %+v %s", r.code, rep, r.errOut)
	}
}

// TestChangesLagIsBoundedWhenTheFirstRegionHangs: with East US hung, every read fails
// over after the attempt timeout, and the estimate is the same.
func TestChangesLagIsBoundedWhenTheFirstRegionHangs(t *testing.T) {
	srv := lagAccount(t)
	writeItems(t, "a", 1)
	checkpoint := feedPosition(t, srv)
	writeItems(t, "b", 2)
	putLease(t, dotnetLease("p..0", "host-1", checkpoint, time.Now()))
	putLease(t, javaEPKLease("p..-10", "host-2", checkpoint, time.Now()))
	if _, err := srv.AddFault(faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "--attempt-timeout", "300ms", "--diagnostics=json", "-o", "json")
	// Generous: the hung attempts' 300 ms, and cross-region reads, on a loaded machine.
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Fatalf("took %s", elapsed)
	}
	rep := lagJSON(t, r)
	if r.code != ExitOK || rep.TotalLag != 4 || rep.Errors != 0 {
		t.Fatalf("exit %d, lag %d, %d errors: %s", r.code, rep.TotalLag, rep.Errors, r.errOut)
	}
	// One poll event a range read, each won outside East US.
	validate(t, "diagnostics", r.errOut, true)
	polls := 0
	for _, line := range strings.Split(strings.TrimSpace(r.errOut), "\n") {
		var ev struct {
			Event       string
			Note        string
			Diagnostics struct {
				WinningRegion string `json:"winning_region"`
			}
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Event != "poll" {
			continue
		}
		polls++
		if ev.Diagnostics.WinningRegion == "East US" || ev.Diagnostics.WinningRegion == "" || !strings.HasPrefix(ev.Note, "lease p..") {
			t.Errorf("a poll won in %q (note %q): %s", ev.Diagnostics.WinningRegion, ev.Note, line)
		}
	}
	if polls != 2 {
		t.Errorf("%d poll events, want 2:\n%s", polls, r.errOut)
	}
}

// TestChangesLagAfterASplit: the range of a partition key range lease is gone, which
// the SDKs count 1 until the processor takes over its children; an effective partition
// key range lease is read in each child from its continuation, and still counts what
// was written after its checkpoint.
func TestChangesLagAfterASplit(t *testing.T) {
	srv := lagAccount(t)
	writeItems(t, "a", 3)
	checkpoint := feedPosition(t, srv)
	writeItems(t, "b", 2)
	putLease(t, dotnetLease("p..0", "host-1", checkpoint, time.Now()))
	putLease(t, dotnetEPKLease("p..-10", "host-2", checkpoint, time.Now()))
	if _, err := srv.SplitRange(emulator.SplitRequest{Database: "app", Container: "items", Range: "0"}); err != nil {
		t.Fatal(err)
	}
	r := cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s %s", r.code, r.out, r.errOut)
	}
	rep := lagJSON(t, r)
	if l := leaseByID(t, rep, "p..0"); l.EstimatedLag == nil || *l.EstimatedLag != 1 || l.Note == nil || !strings.Contains(*l.Note, "split or merged") {
		t.Errorf("the lease of the range that split: lag %v, note %v", deref(l.EstimatedLag), l.Note)
	}
	if l := leaseByID(t, rep, "p..-10"); l.EstimatedLag == nil || *l.EstimatedLag != 2 || len(l.PartitionKeyRanges) != 2 {
		t.Errorf("the feed range lease across the children: lag %v, ranges %v", deref(l.EstimatedLag), l.PartitionKeyRanges)
	}
}

// TestChangesLagKeepsToTheMonitoredContainersLeases: in a lease container shared by
// processors of several containers, the leases whose ids name the monitored container
// (by its resource id, .NET's and Java's effective partition key range leases, or by its
// names, Java's partition key range leases) are estimated, the others skipped.
func TestChangesLagKeepsToTheMonitoredContainersLeases(t *testing.T) {
	srv := lagAccount(t)
	var show struct{ RID string }
	if r := cosmosctl(t, "", "container", "show", "items", "-o", "json"); r.code != 0 || json.Unmarshal([]byte(r.out), &show) != nil || show.RID == "" {
		t.Fatalf("container show: %+v", r)
	}
	writeItems(t, "a", 1)
	checkpoint := feedPosition(t, srv)
	writeItems(t, "b", 2)
	putLease(t, dotnetLease("procacct.documents.azure.com_AQAAAA==_"+show.RID+"..0", "host-1", checkpoint, time.Now()))
	putLease(t, javaLease("procacct.documents.azure.com_app_items..0", "worker-a", checkpoint, time.Now()))
	putLease(t, dotnetLease("procacct.documents.azure.com_AQAAAA==_AQAAAAIAAIB=..0", "host-1", checkpoint, time.Now()))
	putLease(t, javaLease("procacct.documents.azure.com_app_orders..0", "worker-a", checkpoint, time.Now()))
	r := cosmosctl(t, "", "changes", "lag", "--lease-container", "leases", "-o", "json")
	rep := lagJSON(t, r)
	if r.code != ExitOK || len(rep.Leases) != 2 || rep.TotalLag != 4 || len(rep.Skipped) != 2 || len(rep.Warnings) != 0 || r.errOut != "" {
		t.Fatalf("exit %d, %d leases, lag %d, skipped %+v, warnings %v: %s", r.code, len(rep.Leases), rep.TotalLag, rep.Skipped, rep.Warnings, r.errOut)
	}
	for _, s := range rep.Skipped {
		if !strings.Contains(s.ID, "AIB=") && !strings.Contains(s.ID, "orders") {
			t.Errorf("skipped %s", s.ID)
		}
	}
}
