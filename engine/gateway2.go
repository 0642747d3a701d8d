package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Gateway 2.0 ("thin client"): point operations travel as RNTBD frames in HTTP/2 POSTs
// to a regional proxy that the account advertises, and the proxy picks the replica.
// Which operations and which proxy follow the SDKs:
//
//   - only item point operations (read, create, upsert, replace, delete, patch): the
//     .NET SDK also sends queries and LatestVersion change feed reads, which need the
//     range headers cosmosctl does not send; they go through the gateway as before
//     (ThinClientStoreModel.IsOperationSupportedByThinClient);
//   - reads go to the region's proxy among thinClientReadableLocations, writes to its
//     proxy among thinClientWritableLocations, never across (the Rust driver's region
//     pairing, GATEWAY_V2_SPEC.md Phase 3); a region with no proxy of that kind is
//     served by its gateway for that attempt (eligibility fallback, per request);
//   - the proxy is told the account (its document's id), the container's resource id
//     and the item's effective partition key (ThinClientTransportSerializer).

// viaThinClient reports the operations Gateway 2.0 carries.
func (k OpKind) viaThinClient() bool {
	switch k {
	case OpRead, OpCreate, OpUpsert, OpReplace, OpDelete, OpPatch:
		return true
	}
	return false
}

// thinClientTarget is the Gateway 2.0 proxy an attempt of op in region goes to, and what
// the proxy needs to route it; ok is false when the client is not in gateway2 mode, the
// operation is not one the proxy carries, or the region advertises no proxy for it (the
// attempt goes through the gateway).
func (c *Client) thinClientTarget(ctx context.Context, op *Operation, acct *cosmos.Account, region cosmos.Location) (string, *cosmos.ThinClient, bool, error) {
	if !c.opts.ThinClient || !op.Kind.viaThinClient() {
		return "", nil, false, nil
	}
	proxies, kind := acct.ThinClientReadableLocations, "reads"
	if op.Kind.IsWrite() {
		proxies, kind = acct.ThinClientWritableLocations, "writes"
	}
	endpoint := ""
	for _, l := range proxies {
		if strings.EqualFold(l.Name, region.Name) {
			endpoint = endpointOf(l)
		}
	}
	switch {
	case len(proxies) == 0:
		return "", nil, false, fmt.Errorf("gateway2: the account advertises no Gateway 2.0 proxy for %s", kind)
	case endpoint == "":
		return "", nil, false, fmt.Errorf("gateway2: region %s has no Gateway 2.0 proxy for %s", region.Name, kind)
	}
	if op.PartitionKey == nil {
		return "", nil, false, fmt.Errorf("gateway2: the operation has no partition key to route by")
	}
	info, err := c.containerRouting(ctx, op.Database, op.Container, endpointOf(region))
	if err != nil {
		return "", nil, false, err
	}
	if info.def.Version == 1 {
		// cosmosctl hashes partition keys with the V2 scheme only.
		return "", nil, false, fmt.Errorf("gateway2: container %s/%s hashes partition keys with the V1 scheme, which cosmosctl does not compute", op.Database, op.Container)
	}
	rid := info.link[strings.LastIndexByte(info.link, '/')+1:]
	return endpoint, &cosmos.ThinClient{AccountName: acct.ID, CollectionRID: rid, EffectivePartitionKey: cosmos.EffectivePartitionKey(op.PartitionKey)}, true, nil
}
