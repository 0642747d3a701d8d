package emulator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// populateStatistics asks every request for partition statistics, as the .NET SDK's
// PopulatePartitionKeyRangeStatistics option does on a container read.
type populateStatistics struct{}

func (populateStatistics) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header.Set(cosmos.HeaderPopulatePartitionStatistics, "true")
	return req.Next()
}

// TestSDKReadsAContainerWithPartitionStatistics: a container read that asks for
// partition statistics gets the service's "statistics" array (per range: id, sizeInKB,
// documentCount) beside the container's properties, and the official Go SDK still reads
// the container from that answer.
func TestSDKReadsAContainerWithPartitionStatistics(t *testing.T) {
	s := startSDKTest(t)
	cred, err := azcosmos.NewKeyCredential(s.Key())
	if err != nil {
		t.Fatal(err)
	}
	opts := &azcosmos.ClientOptions{}
	opts.PerCallPolicies = []policy.Policy{populateStatistics{}}
	client, err := azcosmos.NewClientWithKey(s.Endpoint(), cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	container, err := client.NewContainer("db", "items")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	perRange := map[string]int64{}
	for i := 0; i < 20; i++ {
		v := fmt.Sprintf("k%d", i)
		resp, err := container.CreateItem(ctx, azcosmos.NewPartitionKeyString(v), []byte(fmt.Sprintf(`{"id":"i","pk":%q}`, v)), nil)
		if err != nil {
			t.Fatal(err)
		}
		perRange[resp.RawResponse.Header.Get(cosmos.HeaderPartitionKeyRangeID)]++
	}
	got, err := container.Read(ctx, nil)
	if err != nil {
		t.Fatalf("the SDK does not read the container with statistics: %v", err)
	}
	if got.ContainerProperties == nil || got.ContainerProperties.ID != "items" || got.ContainerProperties.PartitionKeyDefinition.Paths[0] != "/pk" {
		t.Fatalf("container properties: %+v", got.ContainerProperties)
	}
	var body struct {
		Statistics []struct {
			ID            string `json:"id"`
			SizeInKB      int64  `json:"sizeInKB"`
			DocumentCount int64  `json:"documentCount"`
		} `json:"statistics"`
	}
	if err := json.NewDecoder(got.RawResponse.Body).Decode(&body); err != nil && len(body.Statistics) == 0 {
		t.Fatalf("statistics: %v", err)
	}
	if len(body.Statistics) != 4 {
		t.Fatalf("want one entry per range of 4: %+v", body.Statistics)
	}
	var total int64
	for _, st := range body.Statistics {
		if st.DocumentCount != perRange[st.ID] || (st.DocumentCount > 0) != (st.SizeInKB > 0) {
			t.Fatalf("range %s: %+v, the SDK stored %d items there", st.ID, st, perRange[st.ID])
		}
		total += st.DocumentCount
	}
	if total != 20 {
		t.Fatalf("%d items counted, 20 stored", total)
	}
}
