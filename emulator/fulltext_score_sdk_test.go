package emulator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// rankDocs are the corpus of emulator/jsondoc's BM25 tests (fulltext_score_test.go,
// whose scores are worked out by hand) in partition key "a", and documents in "b"
// that must not count: their words would change every score if they did.
var rankDocs = []string{
	`{"id":"1","pk":"a","t":"the quick brown fox"}`,
	`{"id":"2","pk":"a","t":"The lazy dog sleeps all day"}`,
	`{"id":"3","pk":"a","t":"quick, QUICK fox"}`,
	`{"id":"4","pk":"a","x":"quick"}`,
	`{"id":"5","pk":"b","t":"quick dog quick dog quick dog"}`,
	`{"id":"6","pk":"b","t":"dog"}`,
}

// sdkIDs runs a query through the Go SDK within partition key pk, in pages of
// pageSize, and returns the ids (VALUE c.id rows).
func sdkIDs(t *testing.T, c *azcosmos.ContainerClient, sql string, pk string, pageSize int32, params ...azcosmos.QueryParameter) ([]string, error) {
	t.Helper()
	pager := c.NewQueryItemsPager(sql, azcosmos.NewPartitionKeyString(pk), &azcosmos.QueryOptions{PageSizeHint: pageSize, QueryParameters: params})
	var ids []string
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			return ids, err
		}
		for _, it := range page.Items {
			var id string
			if err := json.Unmarshal(it, &id); err != nil {
				t.Fatalf("row %s: %v", it, err)
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// TestSDKOrderByRankWithinAPartitionKey: the Go SDK sends a single-partition query to
// the gateway as it is, and the emulator ranks by BM25 over that partition key's
// documents and fuses with RRF, in the orders the hand computation in
// emulator/jsondoc gives, paged through continuations.
func TestSDKOrderByRankWithinAPartitionKey(t *testing.T) {
	s, err := emulator.Start(emulator.Config{Ranges: 2, Databases: []emulator.DatabaseConfig{{
		ID: "db", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}},
	}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newSDKClient(t, s)
	ctx := context.Background()
	for _, d := range rankDocs {
		var pk struct{ PK string }
		_ = json.Unmarshal([]byte(d), &pk)
		if _, err := c.container.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk.PK), []byte(d), nil); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, sql string
		params    []azcosmos.QueryParameter
		want      []string
	}{
		{"FullTextScore, unscored last", `SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick')`, nil, []string{"3", "1", "2", "4"}},
		{"two terms, a parameter", `SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', @term)`,
			[]azcosmos.QueryParameter{{Name: "@term", Value: "dog"}}, []string{"3", "2", "1", "4"}},
		{"TOP", `SELECT TOP 2 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', 'dog')`, nil, []string{"3", "2"}},
		{"OFFSET LIMIT", `SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', 'dog') OFFSET 1 LIMIT 2`, nil, []string{"2", "1"}},
		{"RRF", `SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'quick'), FullTextScore(c.t, 'dog'))`, nil, []string{"3", "2", "1", "4"}},
		{"weighted RRF", `SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'quick'), FullTextScore(c.t, 'dog'), [1, 2])`, nil, []string{"2", "3", "1", "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, pageSize := range []int32{-1, 1} {
				got, err := sdkIDs(t, c.container, tt.sql, "a", pageSize, tt.params...)
				if err != nil || !slices.Equal(got, tt.want) {
					t.Fatalf("pages of %d: %v (%v), want %v", pageSize, got, err, tt.want)
				}
			}
		})
	}

	for _, tt := range []struct{ sql, want string }{
		{`SELECT c.id, FullTextScore(c.t, 'quick') AS s FROM c`, "The FullTextScore function is only allowed in the ORDER BY RANK clause."},
		{`SELECT VALUE c.id FROM c WHERE FullTextScore(c.t, 'quick') > 0`, "The FullTextScore function is only allowed in the ORDER BY RANK clause."},
		{`SELECT VALUE c.id FROM c ORDER BY RANK c.t`, "The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call."},
	} {
		_, err := sdkIDs(t, c.container, tt.sql, "a", -1)
		var re *azcore.ResponseError
		if !asResponseError(err, &re) || re.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want 400 %q", tt.sql, err, tt.want)
		}
	}

	// Hybrid search: VectorDistance, alone and in RRF with FullTextScore, under a cosine
	// and a Euclidean policy, over emulator/jsondoc's hybridCorpus, whose orders are
	// worked out by hand in rrf_vector_test.go (the most similar document is rank 1:
	// the highest cosine, the smallest Euclidean distance).
	db, err := c.client.NewDatabase("db")
	if err != nil {
		t.Fatal(err)
	}
	emb := func(path string, fn azcosmos.VectorDistanceFunction) azcosmos.VectorEmbedding {
		return azcosmos.VectorEmbedding{Path: path, DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: fn, Dimensions: 2}
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "hybrid",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
			emb("/cos", azcosmos.VectorDistanceFunctionCosine), emb("/euc", azcosmos.VectorDistanceFunctionEuclidean),
		}},
	}, nil); err != nil {
		t.Fatal(err)
	}
	hybrid, _ := db.NewContainer("hybrid")
	for _, d := range []string{
		`{"id":"1","pk":"a","t":"the quick brown fox","cos":[1,0],"euc":[1,0]}`,
		`{"id":"2","pk":"a","t":"The lazy dog sleeps all day","cos":[0,1],"euc":[0,1]}`,
		`{"id":"3","pk":"a","t":"quick, QUICK fox","cos":[1,1],"euc":[1,1]}`,
		`{"id":"4","pk":"a","x":"quick","cos":[3,-1],"euc":[3,-1]}`,
		`{"id":"5","pk":"b","t":"dog dog","cos":[2,1],"euc":[2,1]}`,
	} {
		var pk struct{ PK string }
		_ = json.Unmarshal([]byte(d), &pk)
		if _, err := hybrid.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk.PK), []byte(d), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ sql, want string }{
		{`SELECT VALUE c.id FROM c ORDER BY RANK VectorDistance(c.cos, [2, 1])`, "3,1,4,2"},
		{`SELECT VALUE c.id FROM c ORDER BY RANK VectorDistance(c.euc, [2, 1])`, "3,1,2,4"},
		{`SELECT VALUE c.id FROM c ORDER BY RANK RRF(VectorDistance(c.cos, [2, 1]), FullTextScore(c.t, 'dog'))`, "3,1,2,4"},
		{`SELECT VALUE c.id FROM c ORDER BY RANK RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'))`, "3,2,1,4"},
		{`SELECT VALUE c.id FROM c ORDER BY RANK RRF(VectorDistance(c.cos, [2, 1]), FullTextScore(c.t, 'dog'), [3, 1])`, "3,1,4,2"},
		{`SELECT TOP 3 VALUE c.id FROM c ORDER BY RANK RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'), [3, 1])`, "3,1,2"},
	} {
		for _, pageSize := range []int32{-1, 1} {
			got, err := sdkIDs(t, hybrid, tt.sql, "a", pageSize)
			if err != nil || strings.Join(got, ",") != tt.want {
				t.Errorf("%s, pages of %d: %v (%v), want %s", tt.sql, pageSize, got, err, tt.want)
			}
		}
	}
}
