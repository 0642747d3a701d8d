package emulator

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// Unique keys, as the service enforces them ("Unique key constraints in Azure Cosmos
// DB", learn.microsoft.com/azure/cosmos-db/unique-keys; README, emulator fidelity,
// "unique keys"):
//
//   - Uniqueness is per logical partition: "the partition key combined with the unique
//     key guarantees the uniqueness of an item within the scope of the container". Two
//     partition key values may hold the same unique values; with hierarchical keys the
//     scope is the full key.
//   - A unique key of several paths is unique as a combination ("composite unique key"),
//     and each entry of uniqueKeys is a constraint of its own.
//   - A missing path counts as null: "Sparse unique keys are not supported. If some
//     unique path values are missing, they're treated as null values, which take part in
//     the uniqueness constraint" (same page; the .NET SDK's UniqueKey remarks: "there
//     could be only one document that has missing value for this property"). A path
//     through an array (/address/zipCode where address is an array) is missing too
//     (MicrosoftDocs/azure-docs issue 9716).
//   - Values are compared as stored JSON values, strings case-sensitively: "If you have
//     a unique key defined on the name property, "Gaby" is different from "gaby"" (same
//     page). Numbers compare as numbers (1 and 1.0 are one value), as every number the
//     service indexes is a 64-bit float. How the service compares an object or array at
//     a unique path is not documented; the emulator compares their JSON text.
//   - A write that would make two items of one logical partition share a unique value
//     set is refused with 409 Conflict and the message "Unique index constraint
//     violation." — create and upsert alike (azure-cosmos-dotnet-v2 issue 523: the
//     service answered an upsert 449 for a while, called a bug to be fixed; the message
//     is the one MicrosoftDocs/azure-docs-sdk-dotnet issue 612 shows for a create).
//     Replacing an item with its own values is no violation; a replace that moves away
//     from a value, a delete and an expiry (time to live) free it (the Java SDK's
//     UniqueIndexTest.replaceAndDeleteWithUniqueIndex, run against the service).
//
// The index maps (logical partition key, unique key, values) to the id of the item that
// holds them, one map per container: it is keyed by the logical partition key, not by
// partition key range, so it needs no change when ranges split or merge. Every write of
// one logical partition holds that partition's range lock (store.writeAdmitted,
// atomicBatch), so the check and the update that follows the commit are atomic for the
// keys of that logical partition; the index's own lock only guards the map against
// writes to other logical partitions.

// uniqueIndex is a container's unique key policy, parsed, and who holds which values.
type uniqueIndex struct {
	// keys are the unique keys, each its paths split into steps.
	keys [][][]string
	// fields are the top-level properties the paths start with: all a document is
	// parsed for.
	fields []string
	mu     sync.Mutex
	// holders maps an entry (uniqueEntry) to the id of the item holding it.
	holders map[string]string
}

// uniqueKeyPaths reads the paths of a uniqueKeyPolicy.
func uniqueKeyPaths(raw json.RawMessage) ([][]string, error) {
	if !present(raw) {
		return nil, nil
	}
	var u struct {
		UniqueKeys []struct {
			Paths []string `json:"paths"`
		} `json:"uniqueKeys"`
	}
	if err := json.Unmarshal(raw, &u); err != nil {
		return nil, err
	}
	out := make([][]string, 0, len(u.UniqueKeys))
	for _, k := range u.UniqueKeys {
		out = append(out, k.Paths)
	}
	return out, nil
}

// newUniqueIndex is the index of a container resource's unique key policy, or nil when
// it has none.
func newUniqueIndex(res cosmos.Container) *uniqueIndex {
	paths, err := uniqueKeyPaths(res.UniqueKeyPolicy)
	if err != nil || len(paths) == 0 {
		return nil
	}
	u := &uniqueIndex{holders: map[string]string{}}
	for _, key := range paths {
		var steps [][]string
		for _, p := range key {
			s := strings.Split(strings.TrimPrefix(p, "/"), "/")
			steps = append(steps, s)
			if !slices.Contains(u.fields, s[0]) {
				u.fields = append(u.fields, s[0])
			}
		}
		u.keys = append(u.keys, steps)
	}
	if len(u.keys) == 0 {
		return nil
	}
	return u
}

// entries are the index entries of a stored document body in logical partition pk: one
// per unique key, the partition key, the key's position and its values, each value
// written so that no two different values share a spelling.
func (u *uniqueIndex) entries(pk cosmos.PartitionKey, body []byte) []string {
	doc, err := jsondoc.ParseObjectFields(body, u.fields)
	if err != nil {
		// Stored bodies are the emulator's own JSON; a body it cannot read has no
		// entries rather than failing the write.
		return nil
	}
	out := make([]string, len(u.keys))
	prefix := pk.Identity() + "\x00"
	for i, key := range u.keys {
		b := []byte(prefix)
		b = strconv.AppendInt(b, int64(i), 10)
		for _, steps := range key {
			b = append(b, 0)
			b = appendUniqueValue(b, doc.Lookup(steps))
		}
		out[i] = string(b)
	}
	return out
}

// appendUniqueValue writes one value of a unique key: missing and null alike as null.
func appendUniqueValue(b []byte, v *jsondoc.Value) []byte {
	if v == nil {
		return append(b, 'n')
	}
	switch v.Kind {
	case jsondoc.KindNull:
		return append(b, 'n')
	case jsondoc.KindBool:
		if v.Bool {
			return append(b, 't')
		}
		return append(b, 'f')
	case jsondoc.KindNumber:
		f, err := v.Num.Float64()
		if err != nil || math.IsInf(f, 0) {
			return append(append(b, 'N'), v.Num...)
		}
		if f == 0 {
			f = 0 // -0 and 0 are one number
		}
		return strconv.AppendUint(append(b, 'd'), math.Float64bits(f), 16)
	case jsondoc.KindString:
		b = strconv.AppendInt(append(b, 's'), int64(len(v.Str)), 10)
		return append(append(b, ':'), v.Str...)
	}
	js := v.AppendJSON(nil)
	b = strconv.AppendInt(append(b, 'j'), int64(len(js)), 10)
	return append(append(b, ':'), js...)
}

// uniqueViolation is the service's answer to a write that would break a unique key.
func uniqueViolation() *cosmos.Error {
	return conflict("Unique index constraint violation.")
}

// holds reports whether the item e of c holds entry k at now: it is live and its latest
// version has that entry. An index entry whose item expired or moved on holds nothing.
func (c *container) holds(e *itemEntry, k string, now time.Time) bool {
	if e == nil {
		return false
	}
	l := e.latest()
	return c.live(l, now) && slices.Contains(l.uniq, k)
}

// check refuses entries that another live item of the same logical partition holds.
// The caller holds the lock of the range p that holds pk.
func (u *uniqueIndex) check(c *container, p *partition, pk cosmos.PartitionKey, id string, entries []string, now time.Time) *cosmos.Error {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, k := range entries {
		h, ok := u.holders[k]
		if !ok || h == id {
			continue
		}
		if c.holds(p.items[itemKey(pk, h)], k, now) {
			return uniqueViolation()
		}
	}
	return nil
}

// update moves item id's entries from was (its previous latest version's) to now (nil
// for a delete), once the write is committed.
func (u *uniqueIndex) update(id string, was, now []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, k := range was {
		if u.holders[k] == id {
			delete(u.holders, k)
		}
	}
	for _, k := range now {
		u.holders[k] = id
	}
}

// indexUniqueKeys builds c's unique index from its documents, as a persistent emulator
// starts (disk.go): the entries of each document's latest version. Where two documents
// of an older data file share an entry, the live one holds it.
func (c *container) indexUniqueKeys(now time.Time) {
	u := newUniqueIndex(c.resource())
	c.uniq = u
	if u == nil {
		return
	}
	for _, p := range c.partitions() {
		p.mu.Lock()
		for _, e := range p.items {
			l := e.latest()
			if l == nil || l.body == nil {
				continue
			}
			l.uniq = u.entries(e.pk, l.body)
			for _, k := range l.uniq {
				if h, ok := u.holders[k]; ok && c.holds(p.items[itemKey(e.pk, h)], k, now) {
					continue
				}
				u.holders[k] = e.id
			}
		}
		p.mu.Unlock()
	}
}

// uniqueBatch is the index as an atomic batch sees it: the index plus what the
// batch's operations so far changed, applied to the index only when the batch commits.
type uniqueBatch struct {
	u       *uniqueIndex
	pending map[string]string // entry -> holder id, "" once freed
}

// holder is the id holding entry k, as the batch has left it ("" for none). Only an
// entry the batch did not touch needs the index (and a check that its holder still
// holds it): alive reports that for an id.
func (b *uniqueBatch) holder(k string, alive func(id, k string) bool) string {
	if h, ok := b.pending[k]; ok {
		return h
	}
	b.u.mu.Lock()
	h, ok := b.u.holders[k]
	b.u.mu.Unlock()
	if !ok || !alive(h, k) {
		return ""
	}
	return h
}

// write records, after its check, that id moved from entries was to now.
func (b *uniqueBatch) write(id string, was, now []string, alive func(id, k string) bool) {
	for _, k := range was {
		if b.holder(k, alive) == id {
			b.pending[k] = ""
		}
	}
	for _, k := range now {
		b.pending[k] = id
	}
}

// commit applies the batch's changes to the index.
func (b *uniqueBatch) commit() {
	b.u.mu.Lock()
	defer b.u.mu.Unlock()
	for k, h := range b.pending {
		if h == "" {
			delete(b.u.holders, k)
		} else {
			b.u.holders[k] = h
		}
	}
}
