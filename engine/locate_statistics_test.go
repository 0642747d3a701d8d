package engine

import (
	"encoding/json"
	"testing"
)

// TestRangeStatisticsReadTheServiceShape: a container read's "statistics" entry, in
// the shape the .NET SDK documents for DocumentCollection.PartitionKeyRangeStatistics
// (a key's partitionKey is the key's values as a JSON array), decodes whole.
func TestRangeStatisticsReadTheServiceShape(t *testing.T) {
	body := `{"statistics":[
		{"id":"0","sizeInKB":1200,"documentCount":400,"partitionKeys":[]},
		{"id":"1","sizeInKB":3600,"documentCount":1500,"sampledDistinctPartitionKeyCount":12,
		 "partitionKeys":[{"partitionKey":["tenant-42"],"sizeInKB":2400},{"partitionKey":["acme","user-7"],"sizeInKB":900}]}]}`
	var got struct {
		Statistics []RangeStatistics `json:"statistics"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Statistics) != 2 || got.Statistics[0].SampledDistinctPartitionKeyCount != nil || len(got.Statistics[0].PartitionKeys) != 0 {
		t.Fatalf("%+v", got.Statistics)
	}
	s := got.Statistics[1]
	if s.ID != "1" || s.SizeInKB != 3600 || s.DocumentCount != 1500 || s.SampledDistinctPartitionKeyCount == nil || *s.SampledDistinctPartitionKeyCount != 12 {
		t.Fatalf("%+v", s)
	}
	if len(s.PartitionKeys) != 2 || string(s.PartitionKeys[0].PartitionKey) != `["tenant-42"]` || s.PartitionKeys[0].SizeInKB != 2400 ||
		string(s.PartitionKeys[1].PartitionKey) != `["acme","user-7"]` {
		t.Fatalf("partitionKeys %+v", s.PartitionKeys)
	}
}
