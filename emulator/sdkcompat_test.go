package emulator_test

// Compatibility tests with the official Azure Cosmos DB Go SDK (azcosmos v1.5.0): the
// SDK must work against the emulator unchanged, including its own regional routing and
// failover. Where a request landed is checked on the emulator's side: probe rules (a
// 1 ms delay that counts, per region, the requests that region received) and the
// x-ms-cosmos-emulator-region header the server puts on every response, which a
// recording policy collects for each attempt the SDK makes.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// startSDKTest starts an emulator on free loopback ports with the default regions (East
// US writes; West US and North Europe read) and database "db" with container "items"
// partitioned by /pk, and stops it when the test ends.
func startSDKTest(t *testing.T) *emulator.Server {
	t.Helper()
	s, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{
		ID: "db", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}},
	}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sdkAttempt is one HTTP exchange the SDK made, as the emulator answered it.
type sdkAttempt struct {
	method    string
	path      string
	status    int
	subStatus string
	region    string // the region that served it, from x-ms-cosmos-emulator-region
	retryMs   string // x-ms-retry-after-ms
	err       error  // transport error, when there was no response
}

// attemptRecorder is a per-retry policy: it sits below the SDK's own retry and
// failover policies, so it sees every attempt, not just the final outcome.
type attemptRecorder struct {
	mu       sync.Mutex
	attempts []sdkAttempt
}

func (r *attemptRecorder) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	a := sdkAttempt{method: req.Raw().Method, path: req.Raw().URL.Path, err: err}
	if resp != nil {
		a.status = resp.StatusCode
		a.subStatus = resp.Header.Get(cosmos.HeaderSubStatus)
		a.region = resp.Header.Get(cosmos.HeaderServedRegion)
		a.retryMs = resp.Header.Get(cosmos.HeaderRetryAfterMs)
	}
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
	return resp, err
}

// since returns the attempts recorded from mark on.
func (r *attemptRecorder) since(mark int) []sdkAttempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.attempts[mark:])
}

func (r *attemptRecorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.attempts)
}

// docAttempts keeps the attempts on documents (point operations and queries), leaving
// out the account, container and pkranges reads the SDK makes along the way.
func docAttempts(as []sdkAttempt) []sdkAttempt {
	var out []sdkAttempt
	for _, a := range as {
		segs := cosmos.PathSegments(a.path)
		if len(segs) >= 5 && segs[4] == cosmos.TypeDocuments {
			out = append(out, a)
		}
	}
	return out
}

func describeAttempts(as []sdkAttempt) string {
	s := ""
	for _, a := range as {
		s += "\n  " + a.method + " " + a.path + " → " + strconv.Itoa(a.status) + "/" + a.subStatus + " from " + strconv.Quote(a.region)
		if a.err != nil {
			s += " (" + a.err.Error() + ")"
		}
	}
	return s
}

type sdkClient struct {
	client    *azcosmos.Client
	container *azcosmos.ContainerClient
	rec       *attemptRecorder
}

// newSDKClient connects the official SDK to s with key auth, recording every attempt.
func newSDKClient(t *testing.T, s *emulator.Server, preferred ...string) *sdkClient {
	t.Helper()
	cred, err := azcosmos.NewKeyCredential(s.Key())
	if err != nil {
		t.Fatal(err)
	}
	rec := &attemptRecorder{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the SDK's attempts:%s", describeAttempts(rec.since(0)))
		}
	})
	opts := &azcosmos.ClientOptions{PreferredRegions: preferred}
	opts.PerRetryPolicies = []policy.Policy{rec}
	client, err := azcosmos.NewClientWithKey(s.Endpoint(), cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	container, err := client.NewContainer("db", "items")
	if err != nil {
		t.Fatal(err)
	}
	return &sdkClient{client: client, container: container, rec: rec}
}

// probeRegions adds, for each region, a rule that delays ops by 1 ms there: the rules'
// Fired counts are the emulator's own tally of which region received which requests.
func probeRegions(t *testing.T, s *emulator.Server, ops ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, r := range s.Regions() {
		rule, err := s.AddFault(faults.Rule{
			Region: r.Name, Operations: ops, Effect: faults.EffectDelay,
			Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(time.Millisecond)},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids[r.Name] = rule.ID
	}
	return ids
}

// fired reports how often the rule with id has fired so far.
func fired(t *testing.T, s *emulator.Server, id string) int {
	t.Helper()
	for _, r := range s.Faults().Rules() {
		if r.ID == id {
			return r.Fired
		}
	}
	t.Fatalf("no fault rule %q", id)
	return 0
}

// firedByRegion reads the probe counters.
func firedByRegion(t *testing.T, s *emulator.Server, probes map[string]string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for region, id := range probes {
		out[region] = fired(t, s, id)
	}
	return out
}

func addFault(t *testing.T, s *emulator.Server, r faults.Rule) string {
	t.Helper()
	added, err := s.AddFault(r)
	if err != nil {
		t.Fatal(err)
	}
	return added.ID
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type sdkDoc struct {
	ID    string   `json:"id"`
	PK    string   `json:"pk"`
	N     int      `json:"n"`
	Name  string   `json:"name,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	Extra *string  `json:"extra,omitempty"`
	Color string   `json:"color,omitempty"`
	ETag  string   `json:"_etag"`
}

func decodeDoc(t *testing.T, b []byte) sdkDoc {
	t.Helper()
	var d sdkDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return d
}

// wantStatus checks that err is the SDK's *azcore.ResponseError with the given status.
func wantStatus(t *testing.T, err error, status int, what string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("%s: want a *azcore.ResponseError with status %d, got %T: %v", what, status, err, err)
	}
	if re.StatusCode != status {
		t.Fatalf("%s: status %d, want %d: %v", what, re.StatusCode, status, err)
	}
}

func TestSDKCreateAndReadItem(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")

	created, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 1, Name: "first"}), nil)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.RawResponse.StatusCode != http.StatusCreated || created.ETag == "" {
		t.Fatalf("create: status %d etag %q, want 201 with an etag", created.RawResponse.StatusCode, created.ETag)
	}
	if created.SessionToken == nil || *created.SessionToken == "" {
		t.Error("create: the SDK saw no session token")
	}
	if created.RequestCharge <= 0 {
		t.Errorf("create: request charge %v, want > 0", created.RequestCharge)
	}

	read, err := c.container.ReadItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if read.RawResponse.StatusCode != http.StatusOK {
		t.Fatalf("read: status %d, want 200", read.RawResponse.StatusCode)
	}
	if d := decodeDoc(t, read.Value); d.ID != "a" || d.PK != "p1" || d.N != 1 || d.Name != "first" || azcore.ETag(d.ETag) != read.ETag {
		t.Fatalf("read: got %+v (etag header %q)", d, read.ETag)
	}
	if read.ETag != created.ETag {
		t.Errorf("read: etag %q, but the create returned %q", read.ETag, created.ETag)
	}

	// The same id again in the same logical partition is a conflict.
	_, err = c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1"}), nil)
	wantStatus(t, err, http.StatusConflict, "duplicate create")
	// A read in another logical partition does not find it.
	_, err = c.container.ReadItem(ctx, azcosmos.NewPartitionKeyString("p2"), "a", nil)
	wantStatus(t, err, http.StatusNotFound, "read with another partition key")
}

func TestSDKUpsertCreatesThenReplaces(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")

	up, err := c.container.UpsertItem(ctx, pk, mustJSON(t, sdkDoc{ID: "b", PK: "p1", N: 2}), nil)
	if err != nil {
		t.Fatalf("upsert of a new item: %v", err)
	}
	if up.RawResponse.StatusCode != http.StatusCreated {
		t.Fatalf("upsert of a new item: status %d, want 201", up.RawResponse.StatusCode)
	}
	up2, err := c.container.UpsertItem(ctx, pk, mustJSON(t, sdkDoc{ID: "b", PK: "p1", N: 3}), nil)
	if err != nil {
		t.Fatalf("upsert of an existing item: %v", err)
	}
	if up2.RawResponse.StatusCode != http.StatusOK || up2.ETag == up.ETag {
		t.Fatalf("upsert of an existing item: status %d etag %q (before %q), want 200 with a new etag", up2.RawResponse.StatusCode, up2.ETag, up.ETag)
	}
	read, err := c.container.ReadItem(ctx, pk, "b", nil)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if d := decodeDoc(t, read.Value); d.N != 3 {
		t.Fatalf("read after two upserts: got %+v, want n=3", d)
	}
}

func TestSDKReplaceHonoursIfMatch(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	created, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 1}), nil)
	if err != nil {
		t.Fatalf("create: %v", err)
	}

	// The current etag matches: the replace succeeds and the etag changes.
	etag := created.ETag
	rep, err := c.container.ReplaceItem(ctx, pk, "a", mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 10, Name: "second"}),
		&azcosmos.ItemOptions{IfMatchEtag: &etag, EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatalf("replace with the current etag: %v", err)
	}
	if rep.RawResponse.StatusCode != http.StatusOK || rep.ETag == "" || rep.ETag == etag {
		t.Fatalf("replace: status %d etag %q (before %q), want 200 with a new etag", rep.RawResponse.StatusCode, rep.ETag, etag)
	}
	if d := decodeDoc(t, rep.Value); d.N != 10 || d.Name != "second" || azcore.ETag(d.ETag) != rep.ETag {
		t.Fatalf("replace with a content response: got %+v", d)
	}

	// The old etag is now stale: 412, and the document keeps the first replace.
	_, err = c.container.ReplaceItem(ctx, pk, "a", mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 11}), &azcosmos.ItemOptions{IfMatchEtag: &etag})
	wantStatus(t, err, http.StatusPreconditionFailed, "replace with a stale etag")
	read, err := c.container.ReadItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if d := decodeDoc(t, read.Value); d.N != 10 || read.ETag != rep.ETag {
		t.Fatalf("after a refused replace: got %+v etag %q, want n=10 etag %q", d, read.ETag, rep.ETag)
	}
}

func TestSDKPatchAppliesOperationsAndCondition(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 10, Name: "first", Tags: []string{"x"}, Extra: new("gone soon")}), nil); err != nil {
		t.Fatalf("create: %v", err)
	}

	var ops azcosmos.PatchOperations
	ops.AppendSet("/color", "blue")
	ops.AppendAdd("/tags/-", "y")
	ops.AppendReplace("/name", "second")
	ops.AppendRemove("/extra")
	ops.AppendIncrement("/n", 5)
	patched, err := c.container.PatchItem(ctx, pk, "a", ops, &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	if patched.RawResponse.StatusCode != http.StatusOK {
		t.Fatalf("patch: status %d, want 200", patched.RawResponse.StatusCode)
	}
	check := func(what string, d sdkDoc) {
		t.Helper()
		if d.N != 15 || d.Name != "second" || !slices.Equal(d.Tags, []string{"x", "y"}) || d.Color != "blue" || d.Extra != nil {
			t.Fatalf("%s: got %+v, want n=15 name=second tags=[x y] color=blue and no extra", what, d)
		}
	}
	check("patch response", decodeDoc(t, patched.Value))
	read, err := c.container.ReadItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatalf("read after patch: %v", err)
	}
	check("read after patch", decodeDoc(t, read.Value))
	if read.ETag != patched.ETag {
		t.Errorf("read after patch: etag %q, the patch returned %q", read.ETag, patched.ETag)
	}

	// A false condition: 412, and nothing changes.
	var falseOps azcosmos.PatchOperations
	falseOps.SetCondition("from c where c.n = 999")
	falseOps.AppendSet("/color", "red")
	_, err = c.container.PatchItem(ctx, pk, "a", falseOps, nil)
	wantStatus(t, err, http.StatusPreconditionFailed, "patch with a false condition")
	read, err = c.container.ReadItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatalf("read after a refused patch: %v", err)
	}
	check("read after a refused patch", decodeDoc(t, read.Value))
	if read.ETag != patched.ETag {
		t.Errorf("a refused patch changed the etag from %q to %q", patched.ETag, read.ETag)
	}

	// A true condition applies.
	var trueOps azcosmos.PatchOperations
	trueOps.SetCondition("from c where c.n = 15")
	trueOps.AppendSet("/color", "green")
	if _, err := c.container.PatchItem(ctx, pk, "a", trueOps, nil); err != nil {
		t.Fatalf("patch with a true condition: %v", err)
	}
	read, err = c.container.ReadItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatalf("read after a conditional patch: %v", err)
	}
	if d := decodeDoc(t, read.Value); d.Color != "green" {
		t.Fatalf("after a patch with a true condition: color %q, want green", d.Color)
	}
}

func TestSDKDeleteThenReadIsNotFound(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 1}), nil); err != nil {
		t.Fatalf("create: %v", err)
	}
	del, err := c.container.DeleteItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	if del.RawResponse.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: status %d, want 204", del.RawResponse.StatusCode)
	}
	_, err = c.container.ReadItem(ctx, pk, "a", nil)
	wantStatus(t, err, http.StatusNotFound, "read after delete")
	_, err = c.container.DeleteItem(ctx, pk, "a", nil)
	wantStatus(t, err, http.StatusNotFound, "second delete")
	// The id is free again.
	if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 2}), nil); err != nil {
		t.Fatalf("create after delete: %v", err)
	}
}

func TestSDKSinglePartitionQueryWithParameter(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	// q4 has the same n in another logical partition and must not appear.
	for _, d := range []sdkDoc{{ID: "q1", PK: "p1", N: 7}, {ID: "q2", PK: "p1", N: 7}, {ID: "q3", PK: "p1", N: 8}, {ID: "q4", PK: "p2", N: 7}} {
		if _, err := c.container.CreateItem(ctx, azcosmos.NewPartitionKeyString(d.PK), mustJSON(t, d), nil); err != nil {
			t.Fatalf("create %s: %v", d.ID, err)
		}
	}
	pager := c.container.NewQueryItemsPager("SELECT * FROM c WHERE c.n = @n", pk,
		&azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@n", Value: 7}}})
	var ids []string
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		for _, item := range page.Items {
			d := decodeDoc(t, item)
			if d.PK != "p1" || d.N != 7 {
				t.Errorf("query returned %+v, which does not match", d)
			}
			ids = append(ids, d.ID)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"q1", "q2"}) {
		t.Fatalf("query returned ids %v, want [q1 q2]", ids)
	}
}

// The Go SDK runs no query-plan pipeline: queries in one logical partition run whole
// in the emulator (ORDER BY, TOP, OFFSET … LIMIT, DISTINCT, aggregates, GROUP BY, paged
// with continuations), simple queries run across partitions, and a cross-partition
// query that needs a plan gets the gateway's 400/1004.
func TestSDKQueriesInOnePartitionOfEveryForm(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	var docs []sdkDoc
	for i := 0; i < 30; i++ {
		d := sdkDoc{ID: "q" + strconv.Itoa(i), PK: "p1", N: (i * 7) % 30, Color: []string{"red", "green", "blue"}[i%3]}
		if i%5 == 0 {
			d.PK = "p2" // another logical partition: never in the results
		}
		if _, err := c.container.CreateItem(ctx, azcosmos.NewPartitionKeyString(d.PK), mustJSON(t, d), nil); err != nil {
			t.Fatalf("create %s: %v", d.ID, err)
		}
		if d.PK == "p1" {
			docs = append(docs, d)
		}
	}
	query := func(pk azcosmos.PartitionKey, sql string, pageSize int32) ([]string, int, error) {
		pager := c.container.NewQueryItemsPager(sql, pk, &azcosmos.QueryOptions{PageSizeHint: pageSize})
		var rows []string
		pages := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return rows, pages, err
			}
			pages++
			for _, item := range page.Items {
				rows = append(rows, string(item))
			}
		}
		return rows, pages, nil
	}
	byN := slices.Clone(docs)
	slices.SortFunc(byN, func(a, b sdkDoc) int { return b.N - a.N })
	var wantIDs []string
	for _, d := range byN {
		wantIDs = append(wantIDs, strconv.Quote(d.ID))
	}
	rows, pages, err := query(pk, "SELECT VALUE c.id FROM c ORDER BY c.n DESC", 5)
	if err != nil || !slices.Equal(rows, wantIDs) || pages < len(docs)/5 {
		t.Errorf("ORDER BY DESC in pages of 5: %v in %d pages (%v), want %v", rows, pages, err, wantIDs)
	}
	rows, _, err = query(pk, "SELECT TOP 3 VALUE c.id FROM c ORDER BY c.n DESC", 2)
	if err != nil || !slices.Equal(rows, wantIDs[:3]) {
		t.Errorf("TOP 3: %v (%v)", rows, err)
	}
	rows, _, err = query(pk, "SELECT VALUE c.id FROM c ORDER BY c.n DESC OFFSET 4 LIMIT 6", 4)
	if err != nil || !slices.Equal(rows, wantIDs[4:10]) {
		t.Errorf("OFFSET 4 LIMIT 6: %v (%v)", rows, err)
	}
	rows, _, err = query(pk, "SELECT DISTINCT VALUE c.color FROM c ORDER BY c.color", 1)
	if err != nil || !slices.Equal(rows, []string{`"blue"`, `"green"`, `"red"`}) {
		t.Errorf("DISTINCT VALUE: %v (%v)", rows, err)
	}
	rows, _, err = query(pk, "SELECT VALUE COUNT(1) FROM c", 0)
	if err != nil || !slices.Equal(rows, []string{strconv.Itoa(len(docs))}) {
		t.Errorf("COUNT: %v (%v)", rows, err)
	}
	rows, _, err = query(pk, "SELECT c.color, COUNT(1) AS n FROM c WHERE c.color = 'red' GROUP BY c.color", 0)
	if err != nil || !slices.Equal(rows, []string{`{"color":"red","n":8}`}) {
		t.Errorf("GROUP BY: %v (%v)", rows, err)
	}
	rows, _, err = query(pk, "SELECT c.id, UPPER(c.color) AS c FROM c WHERE c.n BETWEEN 1 AND 2", 0)
	if err != nil || len(rows) != 2 {
		t.Errorf("projection with functions: %v (%v)", rows, err)
	}

	all := azcosmos.NewPartitionKey()
	rows, _, err = query(all, "SELECT VALUE c.id FROM c WHERE c.n < 3", 4)
	if slices.Sort(rows); err != nil || !slices.Equal(rows, []string{`"q0"`, `"q13"`, `"q26"`}) {
		t.Errorf("simple cross-partition query: %v (%v)", rows, err)
	}
	_, _, err = query(all, "SELECT * FROM c ORDER BY c.n", 0)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || re.RawResponse.Header.Get(cosmos.HeaderSubStatus) != "1004" {
		t.Errorf("cross-partition ORDER BY without a query plan: %v, want 400/1004", err)
	}
}

func TestSDKCreatesAndReadsContainer(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()

	db, err := c.client.NewDatabase("db")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     "orders",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/customer"}},
	}, nil)
	if err != nil {
		t.Fatalf("create container: %v", err)
	}
	if resp.RawResponse.StatusCode != http.StatusCreated {
		t.Fatalf("create container: status %d, want 201", resp.RawResponse.StatusCode)
	}
	if p := resp.ContainerProperties; p == nil || p.ID != "orders" || p.ResourceID == "" || !slices.Equal(p.PartitionKeyDefinition.Paths, []string{"/customer"}) {
		t.Fatalf("create container: properties %+v", p)
	}

	// Creating it again → 409.
	_, err = db.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     "orders",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/customer"}},
	}, nil)
	wantStatus(t, err, http.StatusConflict, "second create container")

	orders, err := db.NewContainer("orders")
	if err != nil {
		t.Fatal(err)
	}
	read, err := orders.Read(ctx, nil)
	if err != nil {
		t.Fatalf("read container: %v", err)
	}
	p := read.ContainerProperties
	if p == nil || p.ID != "orders" || p.PartitionKeyDefinition.Kind != azcosmos.PartitionKeyKindHash || p.PartitionKeyDefinition.Version != 2 || !slices.Equal(p.PartitionKeyDefinition.Paths, []string{"/customer"}) {
		t.Fatalf("read container: properties %+v", p)
	}

	// The new container takes items under its own partition key path.
	pk := azcosmos.NewPartitionKeyString("c1")
	if _, err := orders.CreateItem(ctx, pk, []byte(`{"id":"o1","customer":"c1"}`), nil); err != nil {
		t.Fatalf("create item in the new container: %v", err)
	}
	got, err := orders.ReadItem(ctx, pk, "o1", nil)
	if err != nil {
		t.Fatalf("read item in the new container: %v", err)
	}
	var doc struct{ Customer string }
	if err := json.Unmarshal(got.Value, &doc); err != nil || doc.Customer != "c1" {
		t.Fatalf("read item in the new container: %s (%v)", got.Value, err)
	}

	// The pre-created container reads too.
	items, err := c.container.Read(ctx, nil)
	if err != nil {
		t.Fatalf("read items container: %v", err)
	}
	if items.ContainerProperties == nil || items.ContainerProperties.ID != "items" {
		t.Fatalf("read items container: %+v", items.ContainerProperties)
	}
}

func TestSDKReadsGoToFirstPreferredRegionAndWritesToWriteRegion(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s, "West US", "North Europe", "East US")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	readProbes := probeRegions(t, s, faults.GroupReads)
	writeProbes := probeRegions(t, s, faults.GroupWrites)

	const n = 3
	for i := range n {
		id := "w" + strconv.Itoa(i)
		resp, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: id, PK: "p1", N: i}), nil)
		if err != nil {
			t.Fatalf("create %s: %v", id, err)
		}
		if got := resp.RawResponse.Header.Get(cosmos.HeaderServedRegion); got != "East US" {
			t.Errorf("create %s served by %q, want East US", id, got)
		}
	}
	for i := range n {
		id := "w" + strconv.Itoa(i)
		resp, err := c.container.ReadItem(ctx, pk, id, nil)
		if err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
		if d := decodeDoc(t, resp.Value); d.ID != id || d.N != i {
			t.Fatalf("read %s: got %+v", id, d)
		}
		if got := resp.RawResponse.Header.Get(cosmos.HeaderServedRegion); got != "West US" {
			t.Errorf("read %s served by %q, want West US", id, got)
		}
	}
	// A query is a read too.
	pager := c.container.NewQueryItemsPager("SELECT * FROM c", pk, nil)
	found := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		found += len(page.Items)
	}
	if found != n {
		t.Errorf("query found %d items, want %d", found, n)
	}

	if got := firedByRegion(t, s, writeProbes); got["East US"] != n || got["West US"] != 0 || got["North Europe"] != 0 {
		t.Errorf("writes received per region %v, want all %d in East US (the write region)", got, n)
	}
	if got := firedByRegion(t, s, readProbes); got["West US"] != n+1 || got["East US"] != 0 || got["North Europe"] != 0 {
		t.Errorf("reads and queries received per region %v, want all %d in West US (the first preferred region)", got, n+1)
	}
}

func TestSDKReadFailsOverToNextPreferredRegionOn503(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s, "West US", "North Europe", "East US")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 1}), nil); err != nil {
		t.Fatalf("create: %v", err)
	}
	outage := addFault(t, s, faults.Rule{Region: "West US", Operations: []string{faults.OpRead}, Effect: faults.EffectStatus, Status: http.StatusServiceUnavailable})
	probes := probeRegions(t, s, faults.OpRead)

	mark := c.rec.mark()
	resp, err := c.container.ReadItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatalf("read with West US answering 503: %v%s", err, describeAttempts(c.rec.since(mark)))
	}
	if d := decodeDoc(t, resp.Value); d.ID != "a" || d.N != 1 {
		t.Fatalf("read: got %+v", d)
	}
	if got := resp.RawResponse.Header.Get(cosmos.HeaderServedRegion); got != "North Europe" {
		t.Errorf("read served by %q, want North Europe (the next preferred region)", got)
	}
	if got := fired(t, s, outage); got < 1 {
		t.Errorf("the 503 rule fired %d times: the SDK never tried West US", got)
	}
	if got := firedByRegion(t, s, probes); got["North Europe"] != 1 || got["East US"] != 0 {
		t.Errorf("reads received per region %v, want exactly one in North Europe and none in East US", got)
	}
	attempts := docAttempts(c.rec.since(mark))
	if len(attempts) < 2 || attempts[0].region != "West US" || attempts[0].status != http.StatusServiceUnavailable ||
		attempts[len(attempts)-1].region != "North Europe" || attempts[len(attempts)-1].status != http.StatusOK {
		t.Errorf("attempts:%s\nwant a 503 from West US first and a 200 from North Europe last", describeAttempts(attempts))
	}
}

func TestSDKHonoursRetryAfterOn429(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s, "West US", "North Europe", "East US")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 1}), nil); err != nil {
		t.Fatalf("create: %v", err)
	}
	const retryAfter = 200 * time.Millisecond
	throttle := addFault(t, s, faults.Rule{Operations: []string{faults.OpRead}, Count: 2, Effect: faults.EffectStatus,
		Status: http.StatusTooManyRequests, RetryAfter: faults.Duration(retryAfter)})

	mark := c.rec.mark()
	start := time.Now()
	resp, err := c.container.ReadItem(ctx, pk, "a", nil)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("read while throttled: %v%s", err, describeAttempts(c.rec.since(mark)))
	}
	if d := decodeDoc(t, resp.Value); d.ID != "a" {
		t.Fatalf("read: got %+v", d)
	}
	if got := fired(t, s, throttle); got != 2 {
		t.Errorf("the 429 rule fired %d times, want 2", got)
	}
	// Two waits of 200 ms; the bound is generous, and there is deliberately no upper one.
	if elapsed < 300*time.Millisecond {
		t.Errorf("the read took %v; with two 429s asking to retry after %v it should take at least 300ms", elapsed, retryAfter)
	}
	// The SDK waited because the emulator told it how long to: both 429s carried the hint.
	attempts := docAttempts(c.rec.since(mark))
	if len(attempts) != 3 || attempts[0].status != http.StatusTooManyRequests || attempts[1].status != http.StatusTooManyRequests || attempts[2].status != http.StatusOK {
		t.Fatalf("attempts:%s\nwant 429, 429, 200", describeAttempts(attempts))
	}
	for _, a := range attempts[:2] {
		if a.retryMs != "200" {
			t.Errorf("a 429 carried %s: %q, want \"200\"", cosmos.HeaderRetryAfterMs, a.retryMs)
		}
	}
}

func TestSDKWriteFollowsWriteRegionFailover(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s, "West US", "North Europe", "East US")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p1")
	created, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 1}), nil)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := created.RawResponse.Header.Get(cosmos.HeaderServedRegion); got != "East US" {
		t.Fatalf("create served by %q, want East US (the write region before failover)", got)
	}

	if err := s.Failover("West US"); err != nil {
		t.Fatal(err)
	}
	probes := probeRegions(t, s, faults.GroupWrites)
	mark := c.rec.mark()
	resp, err := c.container.UpsertItem(ctx, pk, mustJSON(t, sdkDoc{ID: "a", PK: "p1", N: 2}), nil)
	if err != nil {
		t.Fatalf("write after failover: %v%s", err, describeAttempts(c.rec.since(mark)))
	}
	if resp.RawResponse.StatusCode != http.StatusOK {
		t.Errorf("upsert of an existing item: status %d, want 200", resp.RawResponse.StatusCode)
	}
	if got := resp.RawResponse.Header.Get(cosmos.HeaderServedRegion); got != "West US" {
		t.Errorf("write after failover served by %q, want West US", got)
	}
	all := c.rec.since(mark)
	attempts := docAttempts(all)
	if len(attempts) < 2 || attempts[0].region != "East US" || attempts[0].status != http.StatusForbidden || attempts[0].subStatus != strconv.Itoa(cosmos.SubWriteForbidden) {
		t.Errorf("attempts:%s\nwant the first write refused by East US with 403/3", describeAttempts(all))
	}
	if last := attempts[len(attempts)-1]; last.region != "West US" || last.status != http.StatusOK {
		t.Errorf("attempts:%s\nwant the last write accepted by West US", describeAttempts(all))
	}
	// Between the refusal and the accepted write, the SDK re-read the account.
	refused, refreshed, accepted := -1, -1, -1
	for i, a := range all {
		switch {
		case a.method == http.MethodGet && (a.path == "/" || a.path == "") && a.status == http.StatusOK && refused >= 0 && refreshed < 0:
			refreshed = i
		case a.method == http.MethodPost && a.status == http.StatusForbidden && refused < 0:
			refused = i
		case a.method == http.MethodPost && a.status == http.StatusOK:
			accepted = i
		}
	}
	if refused < 0 || refreshed < refused || accepted < refreshed {
		t.Errorf("attempts:%s\nwant a 403/3, then the SDK re-reading the account (GET /), then the accepted write", describeAttempts(all))
	}
	got := firedByRegion(t, s, probes)
	if got["East US"] < 1 || got["West US"] != 1 || got["North Europe"] != 0 {
		t.Errorf("writes received per region %v, want East US tried and exactly one write in West US", got)
	}

	// The write is there, and later writes go straight to the new write region.
	read, err := c.container.ReadItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatalf("read after failover: %v", err)
	}
	if d := decodeDoc(t, read.Value); d.N != 2 {
		t.Fatalf("read after failover: got %+v, want n=2", d)
	}
	mark = c.rec.mark()
	resp2, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "b", PK: "p1", N: 3}), nil)
	if err != nil {
		t.Fatalf("second write after failover: %v", err)
	}
	if got := resp2.RawResponse.Header.Get(cosmos.HeaderServedRegion); got != "West US" {
		t.Errorf("second write after failover served by %q, want West US", got)
	}
	if as := docAttempts(c.rec.since(mark)); len(as) != 1 {
		t.Errorf("second write after failover took attempts:%s\nwant one, straight to West US", describeAttempts(as))
	}
}
