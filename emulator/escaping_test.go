package emulator_test

// Item ids that contain percent signs, through the clients cosmosctl ships and azcosmos.
// Both escape an id once and sign it as it is; Microsoft's routing gateway decodes the
// path twice (emulator/gatewaypath.go), so an id holding a percent escape is read as
// another id and its point operations are 401, while a '%' that begins no escape is
// served. The create, whose id is in the body, succeeds for all of them.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// percentIDs are ids with percent signs, and whether the routing gateway serves their
// point operations: those whose "%XX" it decodes a second time it does not.
var percentIDs = []struct {
	id       string
	readable bool
}{
	{"a%41", false},     // read as "aA"
	{"50%25off", false}, // read as "50%off"
	{"a%2Fb", false},    // read as "a/b"
	{"a+b %20c", false}, // read as "a+b  c"
	{"100%", true},      // no escape: kept
	{"%zz", true},       // no escape: kept
}

// The client side is unchanged: the path escapes the id once and the link signed is the
// id as it is.
func TestItemPathEscapesPercentOnce(t *testing.T) {
	for _, tc := range percentIDs {
		p := cosmos.ItemPath("db", "items", tc.id)
		if typ, link := cosmos.ResourceFromPath(p); typ != cosmos.TypeDocuments || link != "dbs/db/colls/items/docs/"+tc.id {
			t.Errorf("id %q: path %s signs as (%q, %q), want the id unchanged", tc.id, p, typ, link)
		}
	}
}

func TestEngineCRUDOfIdsWithPercentSigns(t *testing.T) {
	s := startSDKTest(t)
	cred, err := cosmos.NewMasterKey(s.Key())
	if err != nil {
		t.Fatal(err)
	}
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	t.Cleanup(tr.HTTP.CloseIdleConnections)
	c, err := engine.New(engine.Options{Endpoint: s.Endpoint(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	pk, _ := cosmos.PK("p")
	for _, tc := range percentIDs {
		id := tc.id
		t.Run(id, func(t *testing.T) {
			doc := func(n int) []byte { return mustJSON(t, map[string]any{"id": id, "pk": "p", "n": n}) }
			op := func(kind engine.OpKind, body []byte) (*engine.Result, error) {
				return c.Execute(ctx, engine.Operation{Kind: kind, Database: "db", Container: "items", ID: id, PartitionKey: pk, Body: body})
			}
			if res, err := op(engine.OpCreate, doc(1)); err != nil || res.StatusCode != http.StatusCreated {
				t.Fatalf("create → %v, want 201", err)
			}
			if !tc.readable {
				for _, kind := range []engine.OpKind{engine.OpRead, engine.OpReplace, engine.OpDelete} {
					_, err := op(kind, doc(2))
					if st, _, _ := cosmos.Status(err); st != http.StatusUnauthorized {
						t.Fatalf("%s → %v, want 401", kind, err)
					}
				}
				return
			}
			res, err := op(engine.OpRead, nil)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if got := decodeN(t, res.Body); got.ID != id || got.N != 1 {
				t.Fatalf("read → %+v, want id %q n 1", got, id)
			}
			if res, err := op(engine.OpReplace, doc(2)); err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("replace → %v, want 200", err)
			}
			if res, err := op(engine.OpDelete, nil); err != nil || res.StatusCode != http.StatusNoContent {
				t.Fatalf("delete → %v, want 204", err)
			}
			_, err = op(engine.OpRead, nil)
			if st, _, _ := cosmos.Status(err); st != http.StatusNotFound {
				t.Fatalf("read after delete → %v, want 404", err)
			}
		})
	}
}

func TestSDKCRUDOfIdsWithPercentSigns(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	for _, tc := range percentIDs {
		id := tc.id
		t.Run(id, func(t *testing.T) {
			if _, err := c.container.CreateItem(ctx, pk, mustJSON(t, sdkDoc{ID: id, PK: "p", N: 1}), nil); err != nil {
				t.Fatalf("create: %v", err)
			}
			if !tc.readable {
				_, err := c.container.ReadItem(ctx, pk, id, nil)
				checkStatus(t, err, http.StatusUnauthorized, "read")
				_, err = c.container.ReplaceItem(ctx, pk, id, mustJSON(t, sdkDoc{ID: id, PK: "p", N: 2}), nil)
				checkStatus(t, err, http.StatusUnauthorized, "replace")
				_, err = c.container.DeleteItem(ctx, pk, id, nil)
				checkStatus(t, err, http.StatusUnauthorized, "delete")
				return
			}
			read, err := c.container.ReadItem(ctx, pk, id, nil)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if d := decodeDoc(t, read.Value); d.ID != id || d.N != 1 {
				t.Fatalf("read → %+v, want id %q n 1", d, id)
			}
			if _, err := c.container.ReplaceItem(ctx, pk, id, mustJSON(t, sdkDoc{ID: id, PK: "p", N: 2}), nil); err != nil {
				t.Fatalf("replace: %v", err)
			}
			if _, err := c.container.DeleteItem(ctx, pk, id, nil); err != nil {
				t.Fatalf("delete: %v", err)
			}
			_, err = c.container.ReadItem(ctx, pk, id, nil)
			wantStatus(t, err, http.StatusNotFound, "read after delete")
		})
	}
}

type idAndN struct {
	ID string `json:"id"`
	N  int    `json:"n"`
}

func decodeN(t *testing.T, b []byte) idAndN {
	t.Helper()
	var d idAndN
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return d
}

// TestSDKIdsEndingInSpacesAsTheRoutingGatewayHasThem: Microsoft's routing gateway creates
// a document whose id ends in spaces (the id is in the body) but addresses its read,
// replace and delete without the spaces, so the signature the SDK made for the id as it
// is fails: 401 (azcosmos v1.5.0 TestItemIdEncodingRoutingGW, whose other whitespace
// cases are the controls here; Azure/azure-cosmos-dotnet-v3#3507).
func TestSDKIdsEndingInSpacesAsTheRoutingGatewayHasThem(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	for _, tc := range []struct {
		id         string
		afterwards int // the status of the read, the replace and the delete
	}{
		{"Test ", http.StatusUnauthorized},
		{"Test  ", http.StatusUnauthorized},
		{"This is a test", http.StatusOK},
		{" Test", http.StatusOK},
	} {
		t.Run(tc.id, func(t *testing.T) {
			pk := azcosmos.NewPartitionKeyString(tc.id)
			doc := mustJSON(t, map[string]string{"id": tc.id, "pk": tc.id})
			created, err := c.container.CreateItem(ctx, pk, doc, nil)
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.RawResponse.StatusCode != http.StatusCreated {
				t.Fatalf("create → %d, want 201", created.RawResponse.StatusCode)
			}
			_, err = c.container.ReadItem(ctx, pk, tc.id, nil)
			checkStatus(t, err, tc.afterwards, "read")
			_, err = c.container.ReplaceItem(ctx, pk, tc.id, doc, nil)
			checkStatus(t, err, tc.afterwards, "replace")
			_, err = c.container.DeleteItem(ctx, pk, tc.id, nil)
			want := tc.afterwards
			if want == http.StatusOK {
				want = http.StatusNoContent
			}
			checkStatus(t, err, want, "delete")
			if want != http.StatusUnauthorized {
				return
			}
			// The document is there, under its id as created: a query finds it.
			q := c.container.NewQueryItemsPager("SELECT VALUE c.id FROM c WHERE c.id = @id", pk,
				&azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@id", Value: tc.id}}})
			page, err := q.NextPage(ctx)
			if err != nil {
				t.Fatalf("query: %v", err)
			}
			if len(page.Items) != 1 || string(page.Items[0]) != strconv.Quote(tc.id) {
				t.Errorf("the query found %q, want the one id %q", page.Items, tc.id)
			}
		})
	}
}

// checkStatus fails unless err is an SDK error of status want, or want is a success
// and err is nil.
func checkStatus(t *testing.T, err error, want int, what string) {
	t.Helper()
	if want < 300 {
		if err != nil {
			t.Errorf("%s: %v, want %d", what, err, want)
		}
		return
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != want {
		t.Errorf("%s: %v, want %d", what, err, want)
	}
}
