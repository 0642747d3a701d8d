package emulator_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
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

// The official Go SDK against accounts of each consistency level, three regions, reads
// preferring a read region.

func startConsistencyEmulator(t *testing.T, level string, lag time.Duration) *emulator.Server {
	t.Helper()
	s, err := emulator.Start(emulator.Config{
		Consistency: level, ReplicationLag: faults.Duration(lag), Ranges: 1,
		Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}},
	}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sentTokens records the x-ms-session-token of every document request the SDK sends.
type sentTokens struct {
	mu     sync.Mutex
	tokens []string
}

func (r *sentTokens) Do(req *policy.Request) (*http.Response, error) {
	if segs := cosmos.PathSegments(req.Raw().URL.Path); len(segs) >= 5 && segs[4] == cosmos.TypeDocuments {
		r.mu.Lock()
		r.tokens = append(r.tokens, req.Raw().Header.Get(cosmos.HeaderSessionToken))
		r.mu.Unlock()
	}
	return req.Next()
}

func TestSDKReadsItsStrongWriteInAReadRegion(t *testing.T) {
	const lag = 100 * time.Millisecond
	s := startConsistencyEmulator(t, "strong", lag)
	c := newSDKClient(t, s, "West US")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	for n := 1; n <= 3; n++ {
		start := time.Now()
		if _, err := c.container.UpsertItem(ctx, pk, mustJSON(t, sdkDoc{ID: "1", PK: "p", N: n}), nil); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < lag {
			t.Errorf("the SDK's write took %v: a Strong write is acknowledged after every region has it (lag %v)", took, lag)
		}
		mark := c.rec.mark()
		got, err := c.container.ReadItem(ctx, pk, "1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := decodeDoc(t, got.Value); d.N != n {
			t.Errorf("the SDK read n=%d right after writing n=%d: Strong never serves a stale read", d.N, n)
		}
		if as := docAttempts(c.rec.since(mark)); len(as) != 1 || as[0].region != "West US" {
			t.Errorf("the read was served by %s, want the read region West US alone", describeAttempts(as))
		}
	}
}

// Session: the SDK hands the write's token to the read; the read region that has not
// caught up answers 404/1002 and the SDK retries in the write region, which has it.
func TestSDKSessionReadRetriesWhereItsWriteIs(t *testing.T) {
	s := startConsistencyEmulator(t, "session", time.Hour)
	c := newSDKClient(t, s, "West US")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	w, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "1", PK: "p", N: 1}), nil)
	if err != nil {
		t.Fatal(err)
	}
	mark := c.rec.mark()
	got, err := c.container.ReadItem(ctx, pk, "1", &azcosmos.ItemOptions{SessionToken: w.SessionToken})
	if err != nil {
		t.Fatalf("the SDK's session read failed: %v", err)
	}
	if decodeDoc(t, got.Value).N != 1 {
		t.Errorf("read %s, want the write", got.Value)
	}
	as := docAttempts(c.rec.since(mark))
	if len(as) < 2 || as[0].region != "West US" || as[0].status != 404 || as[0].subStatus != "1002" || as[len(as)-1].region != "East US" || as[len(as)-1].status != 200 {
		t.Errorf("attempts %s: want 404/1002 from West US, then 200 from the write region East US", describeAttempts(as))
	}
}

// Eventual: a read region may answer stale (here: not yet there) even with the write's
// session token, which is not waited for.
func TestSDKEventualReadMayBeStale(t *testing.T) {
	s := startConsistencyEmulator(t, "eventual", time.Hour)
	c := newSDKClient(t, s, "West US")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	w, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "1", PK: "p", N: 1}), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.container.ReadItem(ctx, pk, "1", &azcosmos.ItemOptions{SessionToken: w.SessionToken})
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 404 {
		t.Fatalf("an Eventual read in the lagging West US → %v, want the stale 404", err)
	}
}

func TestSDKStrongerRequestLevelIsTheServicesBadRequest(t *testing.T) {
	s := startConsistencyEmulator(t, "session", 0)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "1", PK: "p"}), nil); err != nil {
		t.Fatal(err)
	}
	strong := azcosmos.ConsistencyLevelStrong
	_, err := c.container.ReadItem(ctx, pk, "1", &azcosmos.ItemOptions{ConsistencyLevel: &strong})
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 400 || !strings.Contains(err.Error(), "ConsistencyLevel Strong specified in the request is invalid when service is configured with consistency level Session") {
		t.Fatalf("a Strong read on a Session account → %v, want the service's 400", err)
	}
	eventual := azcosmos.ConsistencyLevelEventual
	if _, err := c.container.ReadItem(ctx, pk, "1", &azcosmos.ItemOptions{ConsistencyLevel: &eventual}); err != nil {
		t.Fatalf("an Eventual read on a Session account: %v", err)
	}
}

// azcosmos keeps no session of its own: it sends x-ms-session-token only when the
// caller sets one (ItemOptions.SessionToken), whatever the account's level.
func TestSDKSendsNoSessionTokenOfItsOwn(t *testing.T) {
	s := startConsistencyEmulator(t, "eventual", 0)
	cred, err := azcosmos.NewKeyCredential(s.Key())
	if err != nil {
		t.Fatal(err)
	}
	rec := &sentTokens{}
	client, err := azcosmos.NewClientWithKey(s.Endpoint(), cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{PerRetryPolicies: []policy.Policy{rec}}})
	if err != nil {
		t.Fatal(err)
	}
	container, _ := client.NewContainer("db", "items")
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: "1", PK: "p"}), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := container.ReadItem(ctx, pk, "1", nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.tokens) != 2 || rec.tokens[0] != "" || rec.tokens[1] != "" {
		t.Errorf("session tokens sent %q: want none", rec.tokens)
	}
}
