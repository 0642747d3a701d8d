package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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
func (c *Client) containerRouting(ctx context.Context, db, coll, endpoint string) (*containerInfo, error) {
	key := db + "/" + coll
	c.mu.Lock()
	info, ok := c.routing[key]
	c.mu.Unlock()
	if ok {
		return info, nil
	}
	resp, err := c.do(ctx, ClassMetadata, endpoint, &cosmos.Request{Method: http.MethodGet, Path: cosmos.ContainerPath(db, coll)})
	if err != nil {
		return nil, err
	}
	var container cosmos.Container
	if err := json.Unmarshal(resp.Body, &container); err != nil || container.RID == "" {
		return nil, fmt.Errorf("could not read container %s for direct mode", key)
	}
	// _self is "dbs/{dbRid}/colls/{collRid}/".
	link := strings.TrimSuffix(container.Self, "/")
	resp, err = c.do(ctx, ClassMetadata, endpoint, &cosmos.Request{Method: http.MethodGet, Path: cosmos.PKRangesPath(db, coll)})
	if err != nil {
		return nil, err
	}
	var feed cosmos.PartitionKeyRangeFeed
	if err := json.Unmarshal(resp.Body, &feed); err != nil || len(feed.Ranges) == 0 {
		return nil, fmt.Errorf("could not read the partition key ranges of %s for direct mode", key)
	}
	info = &containerInfo{def: container.PartitionKey, link: link, ranges: feed.Ranges}
	c.mu.Lock()
	c.routing[key] = info
	c.mu.Unlock()
	return info, nil
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
	if c.addr == nil {
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
