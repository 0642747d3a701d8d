package leases

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// The lease documents below are in the shapes the SDKs' serializers write; the
// property names are theirs (see lease.go for the sources).
func TestParseReadsBothSDKsLeases(t *testing.T) {
	full := &cosmos.EPKRange{Min: "", Max: "FF"}
	for _, tc := range []struct {
		name string
		doc  string
		want Lease
	}{
		{".NET partition key range lease (DocumentServiceLeaseCore): read by its token, not its FeedRange",
			`{"id":"orders-processoracct.documents.azure.com_AAAA_AAAAAAAAAAA=..0","version":0,"_etag":"\"0100\"","LeaseToken":"0",
			  "FeedRange":{"Range":{"min":"","max":"FF"}},"Owner":"host-1","ContinuationToken":"\"42\"","properties":{},
			  "Mode":"Incremental Feed","timestamp":"2026-12-06T09:00:00.1234567Z","_ts":1765011600}`,
			Lease{ID: "orders-processoracct.documents.azure.com_AAAA_AAAAAAAAAAA=..0", Token: "0", Owner: "host-1", Continuation: `"42"`,
				Timestamp: time.Date(2026, 12, 6, 9, 0, 0, 123456700, time.UTC)}},
		{".NET lease migrated from a v2 processor: PartitionId",
			`{"id":"p..3","PartitionId":"3","Owner":null,"ContinuationToken":"\"7\"","timestamp":"2026-12-06T09:00:00Z"}`,
			Lease{ID: "p..3", Token: "3", Continuation: `"7"`, Timestamp: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}},
		{".NET effective partition key range lease (DocumentServiceLeaseCoreEpk)",
			`{"id":"p..-FF","version":1,"_etag":"\"1\"","LeaseToken":"-FF","FeedRange":{"Range":{"min":"","max":"FF"}},
			  "Owner":"host-2","ContinuationToken":"\"9\"","properties":{},"Mode":"Incremental Feed","timestamp":"2026-12-06T09:00:00Z"}`,
			Lease{ID: "p..-FF", Token: "-FF", FeedRange: full, Owner: "host-2", Continuation: `"9"`, Version: 1,
				Timestamp: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}},
		{"Java partition key range lease (ServiceItemLease)",
			`{"id":"pacct.documents.azure.com_app_items..1","_etag":"\"2\"","LeaseToken":"1","ContinuationToken":"\"11\"",
			  "timestamp":"2026-12-06T09:00:00.123Z","Owner":"worker-a"}`,
			Lease{ID: "pacct.documents.azure.com_app_items..1", Token: "1", Owner: "worker-a", Continuation: `"11"`,
				Timestamp: time.Date(2026, 12, 6, 9, 0, 0, 123000000, time.UTC)}},
		{"Java lease as its constructor dates it (ZonedDateTime)",
			`{"id":"p..1","LeaseToken":"1","ContinuationToken":null,"timestamp":"2026-12-06T09:00:00.5Z[UTC]","Owner":null}`,
			Lease{ID: "p..1", Token: "1", Timestamp: time.Date(2026, 12, 6, 9, 0, 0, 500000000, time.UTC)}},
		{"Java effective partition key range lease (ServiceItemLeaseV1)",
			`{"id":"p..-FF","_etag":"\"3\"","LeaseToken":"-FF","ContinuationToken":"e30=","timestamp":"2026-12-06T09:00:00Z",
			  "Owner":"worker-b","version":1,"feedRange":{"Range":{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}}}`,
			Lease{ID: "p..-FF", Token: "-FF", FeedRange: full, Owner: "worker-b", Continuation: "e30=", Version: 1,
				Timestamp: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}},
		{"without an explicit timestamp, the server's _ts",
			`{"id":"p..0","LeaseToken":"0","Owner":"h","ContinuationToken":"\"1\"","_ts":1765011600}`,
			Lease{ID: "p..0", Token: "0", Owner: "h", Continuation: `"1"`, Timestamp: time.Unix(1765011600, 0).UTC()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tc.want.ID || got.Token != tc.want.Token || got.Owner != tc.want.Owner || got.Continuation != tc.want.Continuation ||
				got.Version != tc.want.Version || !got.Timestamp.Equal(tc.want.Timestamp) || (got.FeedRange == nil) != (tc.want.FeedRange == nil) ||
				(got.FeedRange != nil && *got.FeedRange != *tc.want.FeedRange) {
				t.Errorf("got %+v (feed range %v)\nwant %+v (feed range %v)", got, got.FeedRange, tc.want, tc.want.FeedRange)
			}
		})
	}
}

func TestParseSkipsWhatIsNoLease(t *testing.T) {
	for _, doc := range []string{
		`{"id":"pacct.documents.azure.com_AAAA_AAAAAAAAAAA=.info"}`,
		`{"id":"pacct.documents.azure.com_AAAA_AAAAAAAAAAA=.lock","ttl":10}`,
		`{"id":"settings","retries":3}`,
		`"a string"`,
	} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, ErrNotALease) {
			t.Errorf("%s: %v, want ErrNotALease", doc, err)
		}
	}
	// A lease with a broken part is a lease: reported, not skipped.
	_, err := Parse([]byte(`{"id":"p..0","LeaseToken":"0","timestamp":"yesterday"}`))
	if err == nil || errors.Is(err, ErrNotALease) {
		t.Errorf("a lease with a bad timestamp: %v", err)
	}
}

// javaState is a Java ChangeFeedStateV1 as the azure-cosmos-spark connector's tests
// build one (createChangeFeedState), base64 with the URL alphabet as they encode it.
func javaState(lsn string) string {
	json := `{"V":1,"Rid":"coll-rid","Mode":"INCREMENTAL","StartFrom":{"Type":"BEGINNING"},"Continuation":` +
		`{"V":1,"Rid":"coll-rid","Continuation":[{"token":"\"` + lsn + `\"","range":{"min":"","max":"FF"}}],"PKRangeId":"0"}}`
	return base64.URLEncoding.EncodeToString([]byte(json))
}

func TestParseContinuationReadsEveryShape(t *testing.T) {
	full := &cosmos.EPKRange{Min: "", Max: "FF"}
	narrow := &cosmos.EPKRange{Min: "05C1ED193161BC", Max: "05C1ED49932542"}
	for _, tc := range []struct {
		name, tok string
		want      []Position
	}{
		{"never checkpointed", "", nil},
		{"an etag, as the .NET processor checkpoints", `"42"`, []Position{{ETag: `"42"`}}},
		{"a bare LSN", "42", []Position{{ETag: `"42"`}}},
		// azure-cosmos-dotnet-v3 TokenMigrationTest: the migrated token (its expected output).
		{".NET v3 composite continuation", `{"V":2,"Rid":"","Continuation":[{"FeedRange":{"type":"Effective Partition Key Range","value":{"min":"05C1ED193161BC","max":"05C1ED49932542"}},"State":{"type":"continuation","value":"\"54976933\""}}]}`,
			[]Position{{Range: narrow, ETag: `"54976933"`}}},
		// …and its input, the older composite token.
		{"the older composite token", `[{"token":"\"54976933\"","range":{"min":"05C1ED193161BC","max":"05C1ED49932542"}}]`,
			[]Position{{Range: narrow, ETag: `"54976933"`}}},
		{".NET composite from the beginning", `{"V":2,"Rid":"r","Continuation":[{"FeedRange":{"type":"Effective Partition Key Range","value":{"min":"","max":"FF"}},"State":{"type":"beginning"}}]}`,
			[]Position{{Range: full, ETag: ""}}},
		{"Java change feed state, base64", javaState("1234"), []Position{{Range: full, ETag: `"1234"`}}},
		{"Java change feed state not yet continued", base64.StdEncoding.EncodeToString([]byte(`{"V":1,"Rid":"r","Mode":"INCREMENTAL","StartFrom":{"Type":"NOW"}}`)),
			[]Position{{ETag: engine.ChangeFeedFromNow}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseContinuation(tc.tok)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i].ETag != tc.want[i].ETag || (got[i].Range == nil) != (tc.want[i].Range == nil) ||
					(got[i].Range != nil && *got[i].Range != *tc.want[i].Range) {
					t.Errorf("position %d: got %+v %v, want %+v %v", i, got[i], got[i].Range, tc.want[i], tc.want[i].Range)
				}
			}
		})
	}
}

func TestParseContinuationRefusesWhatNoSDKWrites(t *testing.T) {
	for _, tok := range []string{"not a continuation!", `"42`, `{"V":2`, `{"V":2,"Rid":"r"}`, `[]`,
		`{"V":2,"Continuation":[{"State":{"type":"time","value":"2026"}}]}`} {
		if got, err := ParseContinuation(tok); err == nil {
			t.Errorf("%q: %+v, want an error", tok, got)
		}
	}
}

func TestSessionLSNIsTheGlobalLSN(t *testing.T) {
	for tok, want := range map[string]int64{
		"0:-1#123":              123, // <range>:<version>#<global LSN>
		"3:2#123#1=120#2=123":   123, // with each region's LSN
		"0:123":                 123, // the older <range>:<LSN>
		"0:-1#5,1:-1#9":         5,   // the first of several
		"1:-1#123#1=120#2=123,": 123,
	} {
		if got, ok := SessionLSN(tok); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", tok, got, ok, want)
		}
	}
	if _, ok := SessionLSN(""); ok {
		t.Error("an empty token has no LSN")
	}
}

func TestStateByOwnerAndTimestamp(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	o := Options{Now: now, Expiry: DefaultExpiry}
	for _, tc := range []struct {
		owner string
		age   time.Duration
		want  string
	}{
		{"host-1", 10 * time.Second, StateOK},
		{"host-1", 60 * time.Second, StateOK}, // expired only once timestamp + expiry < now
		{"host-1", 61 * time.Second, StateStuck},
		{"", 10 * time.Minute, StateUnowned},
		{"  ", 0, StateUnowned},
	} {
		if got := state(Lease{Owner: tc.owner, Timestamp: now.Add(-tc.age)}, o); got != tc.want {
			t.Errorf("owner %q, %s old: %s, want %s", tc.owner, tc.age, got, tc.want)
		}
	}
}

func TestLeaseIDsNameTheirContainer(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"orders-procacct.documents.azure.com_AQAAAA==_AQAAAAIAAIA=..0", true}, // .NET: database and container resource ids
		{"orders-procacct.documents.azure.com_AQAAAA==_AQAAAAIAAIA=..-FF", true},
		{"orders-procacct.documents.azure.com_app_items..3", true},              // Java partition key range lease: names
		{"orders-procacct.documents.azure.com_AQAAAA==_AQAAAAIAAIB=..0", false}, // another container's
		{"orders-procacct.documents.azure.com_app_orders..0", false},
		{"orders-procacct.documents.azure.com_AQAAAA==_AQAAAAIAAIA=.info", false},
	} {
		if got := leaseOf(tc.id, "app", "items", "AQAAAAIAAIA="); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.id, got, tc.want)
		}
	}
}
