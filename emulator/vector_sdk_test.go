package emulator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// The Go SDK creates a container with a vector embedding policy (one path per distance
// function), stores items in several partition keys, and queries ORDER BY
// VectorDistance within one partition key, which it sends to the gateway as it is: the
// ids come back in the order, and with the scores, of the test's own brute-force
// computation, most similar first (ASC too) and reversed with DESC.
func TestSDKVectorSearchWithinAPartitionKey(t *testing.T) {
	s := startSDKTest(t)
	c := newSDKClient(t, s)
	ctx := context.Background()
	db, err := c.client.NewDatabase("db")
	if err != nil {
		t.Fatal(err)
	}
	emb := func(path string, fn azcosmos.VectorDistanceFunction) azcosmos.VectorEmbedding {
		return azcosmos.VectorEmbedding{Path: path, DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: fn, Dimensions: 3}
	}
	props := azcosmos.ContainerProperties{ID: "vectors",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
			emb("/cos", azcosmos.VectorDistanceFunctionCosine),
			emb("/dot", azcosmos.VectorDistanceFunctionDotProduct),
			emb("/euc", azcosmos.VectorDistanceFunctionEuclidean),
		}},
	}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	cont, _ := db.NewContainer("vectors")
	rng := rand.New(rand.NewSource(5))
	vecs := map[string][]float64{} // the items of partition key "a"
	for i := 0; i < 60; i++ {
		v := make([]float64, 3)
		parts := make([]string, 3)
		for j := range v {
			parts[j] = fmt.Sprintf("%.3f", rng.Float64()*2-1)
			fmt.Sscan(parts[j], &v[j])
		}
		pk := []string{"a", "b", "c"}[i%3]
		id := fmt.Sprintf("i%02d", i)
		arr := "[" + strings.Join(parts, ",") + "]"
		body := fmt.Sprintf(`{"id":%q,"pk":%q,"cos":%s,"dot":%s,"euc":%s}`, id, pk, arr, arr, arr)
		if _, err := cont.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), []byte(body), nil); err != nil {
			t.Fatal(err)
		}
		if pk == "a" {
			vecs[id] = v
		}
	}
	q := []float64{0.5, -0.25, 0.75}
	for _, c := range []struct {
		path, dir  string
		leastFirst bool
	}{{"cos", "", false}, {"dot", " ASC", false}, {"euc", "", false}, {"cos", " DESC", true}, {"euc", " DESC", true}} {
		score := fmt.Sprintf("VectorDistance(c.%s, [0.5, -0.25, 0.75])", c.path)
		sql := "SELECT c.id, " + score + " AS s FROM c ORDER BY " + score + c.dir
		scores := map[string]float64{}
		var want []string
		for id, v := range vecs {
			var dot, na, nb, sq float64
			for i := range v {
				dot += v[i] * q[i]
				na += v[i] * v[i]
				nb += q[i] * q[i]
				sq += (v[i] - q[i]) * (v[i] - q[i])
			}
			scores[id] = map[string]float64{"cos": dot / math.Sqrt(na*nb), "dot": dot, "euc": math.Sqrt(sq)}[c.path]
			want = append(want, id)
		}
		higherFirst := (c.path != "euc") != c.leastFirst
		sort.Slice(want, func(i, j int) bool {
			if higherFirst {
				return scores[want[i]] > scores[want[j]]
			}
			return scores[want[i]] < scores[want[j]]
		})
		pager := cont.NewQueryItemsPager(sql, azcosmos.NewPartitionKeyString("a"), &azcosmos.QueryOptions{PageSizeHint: 7})
		var got []string
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			for _, item := range page.Items {
				var row struct {
					ID string  `json:"id"`
					S  float64 `json:"s"`
				}
				if err := json.Unmarshal(item, &row); err != nil {
					t.Fatal(err)
				}
				if math.Abs(row.S-scores[row.ID]) > 1e-9 {
					t.Errorf("%s: %s scores %v, brute force %v", sql, row.ID, row.S, scores[row.ID])
				}
				got = append(got, row.ID)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s:\n got %v\nwant %v", sql, got, want)
		}
	}
}

// TestOfficialJavaScriptSDKVectorSearch runs sdkcompat/js/vector.test.js: the JavaScript
// SDK's non-streaming ORDER BY pipeline over the emulator's plans and four ranges returns
// the brute-force order for cosine, dot product and Euclidean (TOP, OFFSET … LIMIT,
// DESC, a distanceFunction override), reads hasNonStreamingOrderBy and the similarity
// order in the plan, refuses the query without TOP, and runs it within a partition key.
func TestOfficialJavaScriptSDKVectorSearch(t *testing.T) {
	runJavaScriptSuite(t, emulator.Config{}, "vector.test.js")
}
