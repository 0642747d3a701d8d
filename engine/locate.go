package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"

	"github.com/cosmosctl/cosmosctl/addrcache"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// What `cosmosctl locate` asks of a container beyond its ranges: the partition key
// definition, the per-range statistics the service reports, and a range's replicas.

// PartitionKeyDefinition returns a container's partition key definition (paths and
// kind), read once per process from the write region, and from each other region in
// turn when that one does not answer.
func (c *Client) PartitionKeyDefinition(ctx context.Context, database, container string) (cosmos.PartitionKeyDefinition, error) {
	if database == "" || container == "" {
		return cosmos.PartitionKeyDefinition{}, inputErrorf("no database or container: give --database and --container (or set them in a profile)")
	}
	acct, err := c.topology.get(ctx)
	if err != nil {
		return cosmos.PartitionKeyDefinition{}, err
	}
	return c.partitionKeyDefinition(ctx, database, container, acct, endpointOf(acct.WritableLocations[0]))
}

// RangeStatistics is what the service reports of one partition key range when a
// container read asks for it (x-ms-documentdb-populatepartitionstatistics: true): the
// "statistics" array of the container, as the SDKs' PartitionKeyRangeStatistics read it.
//
// The fields are .NET's Microsoft.Azure.Documents.PartitionKeyRangeStatistics: "id",
// "sizeInKB", "documentCount", "sampledDistinctPartitionKeyCount", "partitionKeys".
type RangeStatistics struct {
	ID            string `json:"id"`
	SizeInKB      int64  `json:"sizeInKB"`
	DocumentCount int64  `json:"documentCount"`
	// SampledDistinctPartitionKeyCount is the service's estimate of the range's distinct
	// logical partitions; nil when it does not say.
	SampledDistinctPartitionKeyCount *int64 `json:"sampledDistinctPartitionKeyCount"`
	// PartitionKeys are the range's largest logical partitions as the service reports
	// them: sampled, approximate, and only the large ones (the .NET SDK's
	// PartitionKeyStatistics remarks: "If your partition keys are below 1GB of storage,
	// they may not show up in the reported statistics").
	PartitionKeys []PartitionKeyStatistics `json:"partitionKeys"`
}

// PartitionKeyStatistics is one entry of a range's partitionKeys: a logical partition
// and its size (.NET PartitionKeyStatistics: "partitionKey", the key in its internal
// JSON form, an array of its values, and "sizeInKB").
type PartitionKeyStatistics struct {
	PartitionKey json.RawMessage `json:"partitionKey"`
	SizeInKB     int64           `json:"sizeInKB"`
}

// PartitionStatistics reads the container with partition statistics requested, from
// the write region and then each other region in turn, and returns the statistics by
// range id: empty (not an error) when the service reports none.
func (c *Client) PartitionStatistics(ctx context.Context, database, container string) (map[string]RangeStatistics, error) {
	acct, err := c.topology.get(ctx)
	if err != nil {
		return nil, err
	}
	var endpoints []string
	for _, l := range append(append([]cosmos.Location(nil), acct.WritableLocations...), acct.ReadableLocations...) {
		if ep := endpointOf(l); !contains(endpoints, ep) {
			endpoints = append(endpoints, ep)
		}
	}
	var resp *cosmos.Response
	for _, ep := range endpoints {
		req := &cosmos.Request{Method: http.MethodGet, Path: cosmos.ContainerPath(database, container), Header: http.Header{}}
		req.Header.Set(cosmos.HeaderPopulatePartitionStatistics, "true")
		resp, err = c.do(ctx, ClassMetadata, ep, req)
		if err == nil || ctx.Err() != nil || (resp != nil && resp.StatusCode < 500 && resp.StatusCode != 408 && resp.StatusCode != 429) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	var body struct {
		Statistics []RangeStatistics `json:"statistics"`
	}
	_ = json.Unmarshal(resp.Body, &body)
	out := make(map[string]RangeStatistics, len(body.Statistics))
	for _, s := range body.Statistics {
		out[s.ID] = s
	}
	return out, nil
}

// RangeReplicas returns the replicas of one partition key range in region, as the
// address cache holds them (resolved through the region's gateway on first use), the
// primary first. Direct mode only.
func (c *Client) RangeReplicas(ctx context.Context, database, container, rangeID, region string) ([]addrcache.Replica, error) {
	if c.addr == nil {
		return nil, ErrNotDirect
	}
	loc, err := c.regionLocation(ctx, region)
	if err != nil {
		return nil, err
	}
	info, err := c.containerRouting(ctx, database, container, endpointOf(loc))
	if err != nil {
		return nil, err
	}
	set, err := c.addr.Replicas(ctx, addrcache.Key{Region: loc.Name, Collection: info.link, Range: rangeID}, false)
	if err != nil {
		return nil, err
	}
	sort.Slice(set, func(i, j int) bool {
		if set[i].Primary != set[j].Primary {
			return set[i].Primary
		}
		return set[i].URL < set[j].URL
	})
	return set, nil
}

// PartitionKeyOfDocument reads a document's partition key at the container's paths, as
// a create or upsert without an explicit key does: the document decoded with UseNumber,
// a missing value refused (*InputError), objects and arrays refused. Bulk loaders call
// it once per item and pass the key on, so the engine does not look again.
func PartitionKeyOfDocument(doc map[string]any, def cosmos.PartitionKeyDefinition) (cosmos.PartitionKey, error) {
	return partitionKeyFromDocument(doc, def)
}
