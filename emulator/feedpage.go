package emulator

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The metadata feeds come in pages, as the service serves them: a read of the databases,
// the containers of a database, the offers or a container's partition key ranges (or a
// query of one of them) answers at most x-ms-max-item-count resources, with an
// x-ms-continuation on every page but the last, which the next request sends back. The
// Go SDK's fix for containers with many partitions (azcosmos CHANGELOG 1.5.0-beta.6, PR
// 26777: "preventing incomplete range sets on containers with many partitions") and the
// Python SDK's note that a split may complete "between the read partition key ranges
// query page responses" (routing_map_provider.py) are the service paging the
// partition key ranges; the JS and Python SDKs read every feed to its last continuation.
//
// Config.FeedPageSize caps every page whatever the client asks, to stand for the pages
// a real account cuts its feeds into (which x-ms-max-item-count does not control: -1
// asks for "as many as the service likes"); by default a page is what the client asks
// for. A continuation names the feed and the last resource served, so a resource
// created or deleted between two pages neither moves nor repeats the others.

// feedToken is the opaque x-ms-continuation of a metadata feed.
type feedToken struct {
	Version int    `json:"v"`
	Feed    string `json:"feed"`
	After   uint64 `json:"after"`
}

const feedTokenVersion = 1

func (t feedToken) String() string {
	t.Version = feedTokenVersion
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseFeedToken(v, feed string) (uint64, error) {
	var t feedToken
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(b, &t) != nil || t.Version != feedTokenVersion {
		return 0, errors.New("the continuation token is not one this emulator issued")
	}
	if t.Feed != feed {
		return 0, errors.New("the continuation token belongs to another feed (" + t.Feed + ")")
	}
	return t.After, nil
}

// feedPageSize is the most resources one page of a metadata feed holds for req: what
// x-ms-max-item-count asks, within Config.FeedPageSize. ok is false once a 400 has been
// answered.
func (s *Server) feedPageSize(req *request) (int, bool) {
	n, ok := s.maxItemCount(req)
	if !ok {
		return 0, false
	}
	if limit := s.cfg.FeedPageSize; limit > 0 && n > limit {
		n = limit
	}
	return n, true
}

// feedPage picks the page of a feed that req asks for. keys are the feed's resources'
// positions, ascending; the page is keys[from:to], and next is the continuation of the
// page after it ("" when this page is the last). ok is false once a 400 has been
// answered.
func (s *Server) feedPage(req *request, feed string, keys []uint64) (from, to int, next string, ok bool) {
	size, ok := s.feedPageSize(req)
	if !ok {
		return 0, 0, "", false
	}
	var after uint64
	if v := req.r.Header.Get(cosmos.HeaderContinuation); v != "" {
		var err error
		if after, err = parseFeedToken(v, feed); err != nil {
			s.writeError(req, badRequest("%s: %v; start the feed again without it", cosmos.HeaderContinuation, err), 0)
			return 0, 0, "", false
		}
	}
	from = sort.Search(len(keys), func(i int) bool { return keys[i] > after })
	to = min(from+size, len(keys))
	if to < len(keys) {
		next = feedToken{Feed: feed, After: keys[to-1]}.String()
	}
	return from, to, next, true
}

// writeFeedPage answers one page of a feed: body holds the page's count resources, and
// next, when not empty, is the continuation of the rest.
func (s *Server) writeFeedPage(req *request, body []byte, count int, next string) {
	if next != "" {
		req.w.Header().Set(cosmos.HeaderContinuation, next)
	}
	s.writeFeed(req, body, count, chargeMetadata)
}

// creationOrder is a database's or container's place in its feed: the creation sequence
// its _rid carries (store.go lays resource ids out as the service does: a database's is
// 4 bytes, a container's the database's and 4 more).
func creationOrder(rid string) uint64 {
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(rid, "-", "/"))
	switch {
	case err != nil:
		return 0
	case len(b) == 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case len(b) == 8:
		return uint64(binary.LittleEndian.Uint32(b[4:]) &^ 0x80000000)
	}
	return 0
}

// indexKeys are the positions of n resources listed in a fixed order: 1 to n.
func indexKeys(n int) []uint64 {
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(i + 1)
	}
	return keys
}
