package emulator

import (
	"net/http"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The delete-all-items-by-partition-key operation: POST
// dbs/{db}/colls/{coll}/operations/partitionkeydelete with the logical partition in
// x-ms-documentdb-partitionkey, as the Python SDK (DeleteAllItemsByPartitionKey), the
// JS SDK (Container.deleteAllItemsForPartitionKey) and the .NET SDK
// (DeleteAllItemsByPartitionKeyStreamAsync, Paths.PartitionKeyDelete) send it. The
// service answers 200 and removes the items in the background; the items leave reads
// and queries at once (Microsoft Learn, "Delete items by partition key value"). Here
// the removal is done before the answer, each item as an ordinary delete, so the
// change feed, replication lag and persistence treat them as any other delete.

const (
	// PartitionKeyDeleteSegment and operationsSegment end the operation's path.
	PartitionKeyDeleteSegment = "partitionkeydelete"
	operationsSegment         = "operations"
	// pkDeleteSignType is the resource type the Python and .NET SDKs sign the
	// operation with (the JS SDK signs it as "colls"); the link is the container's.
	pkDeleteSignType = "partitionkey"
)

// isPartitionKeyDelete reports whether segs (decoded gateway segments) address the
// operation.
func isPartitionKeyDelete(segs []string) bool {
	return len(segs) == 6 && segs[0] == cosmos.TypeDatabases && segs[2] == cosmos.TypeContainers &&
		segs[4] == operationsSegment && strings.EqualFold(segs[5], PartitionKeyDeleteSegment)
}

// partitionKeyDeleteSignatures are the (type, link) pairs a signature on the
// operation may cover: the SDKs differ (Python and .NET "partitionkey", JS "colls"),
// and each works against the service, so each is accepted; the link is the
// container's in both.
func partitionKeyDeleteSignatures(segs []string) (types []string, link string) {
	return []string{pkDeleteSignType, cosmos.TypeContainers}, strings.Join(segs[:4], "/")
}

// servePartitionKeyDelete removes every item of one logical partition.
func (s *Server) servePartitionKeyDelete(req *request, segs []string) {
	c, cerr := s.store.container(segs[1], segs[3])
	if cerr != nil {
		s.writeError(req, cerr, 0)
		return
	}
	s.setContentPath(req, c)
	if pk, err := cosmos.ParsePartitionKeyJSON(req.r.Header.Get(cosmos.HeaderPartitionKey)); err == nil && len(pk) > 0 && len(pk) != len(c.meta.PartitionKey.Paths) {
		// A prefix of a hierarchical key is refused by the service with 400/1001 in
		// these words (the .NET SDK's PartitionKeyDeleteTestForSubpartitionedContainer).
		s.writeError(req, cosmosErr(400, cosmos.SubPartitionKeyMismatch, "Partition key provided either doesn't correspond to definition in the collection or doesn't match partition key field values specified in the document."), 0)
		return
	}
	pk, ok := s.partitionKeyHeader(req, c)
	if !ok {
		return
	}
	p := c.partitionFor(pk)
	if !s.replicaHolds(req, c, p) {
		return
	}
	s.meter(req, c, p)
	if !s.writeAllowed(req) {
		return
	}
	for _, id := range s.store.partitionItemIDs(c, pk) {
		_, err := s.store.write(c, pk, id, req.region, func(cur *itemVersion, _ string) ([]byte, bool, *cosmos.Error) {
			if cur == nil {
				return nil, false, notFound("gone")
			}
			return nil, true, nil
		})
		if err != nil && err.StatusCode != http.StatusNotFound {
			// A 404 is an item deleted by someone else meanwhile: nothing to do.
			s.writeError(req, err, 0)
			return
		}
	}
	// The service's charge for the call itself is not documented (its work is billed
	// in the background against 10% of the container's RU/s); the emulator charges
	// one delete's worth, whatever the partition held.
	s.writeJSON(req, http.StatusOK, nil, chargeDelete)
}

// partitionItemIDs lists the ids of the live items of one logical partition, as the
// write region sees them.
func (st *store) partitionItemIDs(c *container, pk cosmos.PartitionKey) []string {
	p := c.rLockedPartitionFor(pk)
	defer p.mu.RUnlock()
	now := st.clock.Now()
	ident := pk.Identity()
	var ids []string
	for _, e := range p.items {
		if e.pk.Identity() != ident {
			continue
		}
		if c.live(e.latest(), now) {
			ids = append(ids, e.id)
		}
	}
	return ids
}
