package emulator

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Time to live, as the service has it. A container's defaultTtl turns it on: absent, no
// item expires and an item's own ttl is ignored; -1, items live until their own ttl says
// otherwise; n > 0, items expire n seconds after their last write (_ts) unless their own
// ttl says otherwise (-1: never; m > 0: after m seconds).
//
// An expired item is gone at once for every read, query, change feed and write (a create
// of its id succeeds, a replace answers 404), however long the service's background
// deletion takes to reclaim it. The emulator never needs the reclaiming: expiry is
// decided when an item is looked at, from its _ts and ttl, so time moving on the
// emulator's clock is all it takes, and tests drive it with a fake clock.

// validDefaultTTL checks a container's defaultTtl: nil (off), -1, or a positive number
// of seconds; the service refuses anything else.
func validDefaultTTL(ttl *int) *cosmos.Error {
	if ttl == nil || *ttl == -1 || *ttl > 0 {
		return nil
	}
	return badRequest("defaultTtl must be -1 (items expire only by their own ttl) or a positive number of seconds, not %d; leave it out to turn time to live off", *ttl)
}

// itemTTL reads a document's own top-level ttl: -1 or a positive whole number of
// seconds. 0 means none (no ttl, or one the service would not honour).
func itemTTL(body []byte) int32 {
	if !bytes.Contains(body, []byte(`"ttl"`)) {
		return 0
	}
	var doc struct {
		TTL *float64 `json:"ttl"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.TTL == nil {
		return 0
	}
	switch t := *doc.TTL; {
	case t == -1:
		return -1
	case t >= 1 && t <= 1<<31-1 && t == float64(int64(t)):
		return int32(t)
	}
	return 0
}

// expired reports whether version v of a document of c has outlived its time to live
// at now. A deletion (nil body) is not "expired": it is gone already.
func (c *container) expired(v *itemVersion, now time.Time) bool {
	def := c.current.Load().DefaultTTL
	if def == nil || v.body == nil {
		return false
	}
	ttl := int64(v.ttl)
	if ttl == 0 {
		ttl = int64(*def)
	}
	return ttl > 0 && now.Unix() >= v.ts+ttl
}

// live reports whether v is a document a client can see at now: not a deletion, not
// expired.
func (c *container) live(v *itemVersion, now time.Time) bool {
	return v != nil && v.body != nil && !c.expired(v, now)
}
