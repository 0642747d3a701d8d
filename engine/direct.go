package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/cosmosctl/cosmosctl/addrcache"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// containerInfo is what routing to replicas needs to know about a container: its
// partition key definition, its resource-id link (the gateway resolves addresses by
// rids) and its partition key ranges.
type containerInfo struct {
	def    cosmos.PartitionKeyDefinition
	link   string // dbs/{dbRid}/colls/{collRid}
	ranges []cosmos.PartitionKeyRange
}

// containerRouting reads (once per process) the container and its partition key ranges.
// The ranges come from the client's routing cache, which PartitionKeyRanges shares: a
// query that found a range split refreshes them for direct routing too.
func (c *Client) containerRouting(ctx context.Context, db, coll, endpoint string) (*containerInfo, error) {
	key := db + "/" + coll
	c.mu.Lock()
	info, ok := c.routing[key]
	c.mu.Unlock()
	if !ok {
		resp, err := c.do(ctx, ClassMetadata, endpoint, &cosmos.Request{Method: http.MethodGet, Path: cosmos.ContainerPath(db, coll)})
		if err != nil {
			return nil, err
		}
		var container cosmos.Container
		if err := json.Unmarshal(resp.Body, &container); err != nil || container.RID == "" {
			return nil, fmt.Errorf("could not read container %s for direct mode", key)
		}
		// _self is "dbs/{dbRid}/colls/{collRid}/".
		info = &containerInfo{def: container.PartitionKey, link: strings.TrimSuffix(container.Self, "/")}
		c.mu.Lock()
		c.routing[key] = info
		c.mu.Unlock()
	}
	ranges, err := c.cachedRanges(ctx, db, coll, endpoint)
	if err != nil {
		return nil, err
	}
	return &containerInfo{def: info.def, link: info.link, ranges: ranges}, nil
}

// cachedRanges returns the container's partition key ranges from the routing cache,
// reading them from endpoint when the cache has none.
func (c *Client) cachedRanges(ctx context.Context, db, coll, endpoint string) ([]cosmos.PartitionKeyRange, error) {
	key := db + "/" + coll
	c.mu.Lock()
	ranges, ok := c.ranges[key]
	c.mu.Unlock()
	if ok {
		return ranges, nil
	}
	ranges, _, _, err := c.readRanges(ctx, nil, "", endpoint, ReasonInitial, db, coll)
	if err != nil {
		return nil, err
	}
	c.storeRanges(key, ranges)
	return ranges, nil
}

// parseRangesPage reads one page of a partition key range feed.
func parseRangesPage(body []byte, key string) ([]cosmos.PartitionKeyRange, error) {
	var feed cosmos.PartitionKeyRangeFeed
	if err := json.Unmarshal(body, &feed); err != nil || feed.Ranges == nil {
		return nil, fmt.Errorf("could not read the partition key ranges of %s: the answer is not a partition key range feed", key)
	}
	return feed.Ranges, nil
}

// completeRanges is the current ranges of a feed read to its end (pages of them), or an
// error when they do not cover every partition key from "" to "FF" exactly once: a feed
// cut short would otherwise pass for a container with fewer partitions, and every
// cross-partition read would silently miss the rest. (azcosmos refuses such a set the
// same way: isCompleteSetOfRanges in cosmos_partition_key_range_cache.go.)
func completeRanges(all []cosmos.PartitionKeyRange, key string, pages int) ([]cosmos.PartitionKeyRange, error) {
	ranges := currentRanges(all)
	at := ""
	for _, r := range ranges {
		if r.MinInclusive != at {
			break
		}
		at = r.MaxExclusive
	}
	if len(ranges) == 0 || at != "FF" {
		return nil, fmt.Errorf("could not read the partition key ranges of %s: the %d range(s) in %d page(s) of the feed do not cover every partition key (\"\" to \"FF\")", key, len(ranges), pages)
	}
	return ranges, nil
}

// currentRanges drops the ranges that another range names as a parent: a feed read
// while a split completes may still list the range that split beside its children.
func currentRanges(ranges []cosmos.PartitionKeyRange) []cosmos.PartitionKeyRange {
	gone := map[string]bool{}
	for _, r := range ranges {
		for _, p := range r.Parents {
			gone[p] = true
		}
	}
	out := make([]cosmos.PartitionKeyRange, 0, len(ranges))
	for _, r := range ranges {
		if !gone[r.ID] {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MinInclusive < out[j].MinInclusive })
	return out
}

func (c *Client) storeRanges(key string, ranges []cosmos.PartitionKeyRange) {
	c.mu.Lock()
	c.ranges[key] = ranges
	c.mu.Unlock()
}

// gatewayResolver asks a region's gateway for replica addresses.
type gatewayResolver struct{ c *Client }

func (g gatewayResolver) Resolve(ctx context.Context, key addrcache.Key, force bool) ([]cosmos.Address, error) {
	acct, err := g.c.topology.get(ctx)
	if err != nil {
		return nil, err
	}
	endpoint := ""
	for _, l := range acct.ReadableLocations {
		if l.Name == key.Region {
			endpoint = endpointOf(l)
		}
	}
	if endpoint == "" {
		return nil, fmt.Errorf("region %s is not a region of the account", key.Region)
	}
	q := url.Values{}
	q.Set("$resolveFor", key.Collection+"/docs")
	q.Set("$filter", "protocol eq rntbd")
	q.Set("$partitionKeyRangeIds", key.Range)
	req := &cosmos.Request{Method: http.MethodGet, Path: "//addresses/", Query: q, ResourceType: cosmos.TypeDocuments, ResourceLink: key.Collection, Header: http.Header{}}
	if force {
		req.Header.Set(cosmos.HeaderForceRefresh, "true")
	}
	resp, err := g.c.do(ctx, ClassMetadata, endpoint, req)
	if err != nil {
		return nil, err
	}
	var feed cosmos.AddressFeed
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		return nil, fmt.Errorf("the gateway's addresses answer is not an address feed: %v", err)
	}
	var out []cosmos.Address
	for _, a := range feed.Addresses {
		if a.PartitionKeyRangeID == "" || a.PartitionKeyRangeID == key.Range {
			out = append(out, a)
		}
	}
	return out, nil
}

// replicaTarget picks the replica an attempt goes to in direct mode: the first, in the
// cache's health order, that this operation has not tried yet (a replica that failed
// for this request counts as unhealthy for it). ok is false when direct routing is off
// or not possible, and the attempt goes to the gateway.
func (c *Client) replicaTarget(ctx context.Context, op *Operation, region cosmos.Location, tried map[string]bool) (addrcache.Key, addrcache.Replica, bool, error) {
	if c.addr == nil || op.Kind.viaGateway() {
		return addrcache.Key{}, addrcache.Replica{}, false, nil
	}
	info, err := c.containerRouting(ctx, op.Database, op.Container, endpointOf(region))
	if err != nil {
		return addrcache.Key{}, addrcache.Replica{}, false, err
	}
	rng, ok := cosmos.RangeFor(cosmos.EffectivePartitionKey(op.PartitionKey), info.ranges)
	if !ok {
		return addrcache.Key{}, addrcache.Replica{}, false, fmt.Errorf("no partition key range holds %s", op.PartitionKey)
	}
	key := addrcache.Key{Region: region.Name, Collection: info.link, Range: rng.ID}
	replicas, err := c.addr.Replicas(ctx, key, op.Kind.IsWrite())
	if err != nil {
		return key, addrcache.Replica{}, false, err
	}
	for _, r := range replicas {
		if !tried[r.URL] {
			return key, r, true, nil
		}
	}
	return key, addrcache.Replica{}, false, nil
}
