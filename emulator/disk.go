package emulator

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// disk persists the store in a bbolt file. bbolt commits with a copy-on-write B+tree and
// an fsync before the meta page flips, so a write that Update returned for is on disk
// and a crash at any point leaves the previous or the new state, never a torn one.
type disk struct {
	db *bolt.DB
}

var (
	bucketMeta  = []byte("meta")
	bucketDBs   = []byte("dbs")
	bucketColls = []byte("colls")
	bucketItems = []byte("items")
	keyRIDSeq   = []byte("rid_seq")
	keyDocSeq   = []byte("doc_seq")
	keyLSN      = []byte("lsn")
)

// DataFileName is the store's file inside --data-dir.
const DataFileName = "cosmosctl-emulator.db"

// DefaultDataLockWait is how long Start waits for another emulator to release the data
// file before it gives up with a *DataInUseError.
const DefaultDataLockWait = 2 * time.Second

// DataInUseError is Start's error when another process holds the data file: one
// emulator at a time can serve a data directory. Its message names the flag of
// `cosmosctl emulator`; callers with other flags say it their own way.
type DataInUseError struct {
	Path string // the data file
}

func (e *DataInUseError) Error() string {
	return fmt.Sprintf("data file %s is in use by another emulator: stop it or choose another --data-dir", e.Path)
}

// openDisk opens the data file in dir, waiting up to wait (DefaultDataLockWait if 0 or
// less) for another process's lock on it.
func openDisk(dir string, wait time.Duration) (*disk, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	if wait <= 0 {
		wait = DefaultDataLockWait
	}
	path := filepath.Join(dir, DataFileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: wait})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, &DataInUseError{Path: path}
		}
		return nil, fmt.Errorf("opening data file %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketDBs, bucketColls, bucketItems} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("initialising data file %s: %w", path, err)
	}
	return &disk{db: db}, nil
}

func (d *disk) close() error { return d.db.Close() }

type diskDatabase struct {
	Meta cosmos.Database `json:"meta"`
	Seq  uint32          `json:"seq"`
}

type diskContainer struct {
	DB     string           `json:"db"`
	Meta   cosmos.Container `json:"meta"`
	Seq    uint32           `json:"seq"`
	Ranges int              `json:"ranges"`
}

// diskItem is one stored document and what is needed to rebuild its entry.
type diskItem struct {
	id   string
	pk   cosmos.PartitionKey
	rid  string
	seq  uint64
	lsn  int64
	ts   int64
	etag string
	body []byte
}

func collKey(db, coll string) []byte { return []byte(db + "\x00" + coll) }

func putUint64(b *bolt.Bucket, key []byte, v uint64) error {
	return b.Put(key, binary.BigEndian.AppendUint64(nil, v))
}

func getUint64(b *bolt.Bucket, key []byte) uint64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func (d *disk) putDatabase(db *database, ridSeq uint32) error {
	data, err := json.Marshal(diskDatabase{Meta: db.meta, Seq: db.seq})
	if err != nil {
		return err
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		if err := putUint64(tx.Bucket(bucketMeta), keyRIDSeq, uint64(ridSeq)); err != nil {
			return err
		}
		return tx.Bucket(bucketDBs).Put([]byte(db.meta.ID), data)
	})
}

func (d *disk) deleteDatabase(db *database) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		for _, c := range db.colls {
			if err := deleteContainerTx(tx, c); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketDBs).Delete([]byte(db.meta.ID))
	})
}

// putContainer writes container c's record, with res as its resource (the one created,
// or the one a replace is about to make current).
func (d *disk) putContainer(c *container, res cosmos.Container, ridSeq uint32) error {
	data, err := json.Marshal(diskContainer{DB: c.db.meta.ID, Meta: res, Seq: c.seq, Ranges: len(c.partitions())})
	if err != nil {
		return err
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		if err := putUint64(tx.Bucket(bucketMeta), keyRIDSeq, uint64(ridSeq)); err != nil {
			return err
		}
		items, err := tx.Bucket(bucketItems).CreateBucketIfNotExists([]byte(c.meta.RID))
		if err != nil {
			return err
		}
		if _, err := items.CreateBucketIfNotExists(keyLSN); err != nil {
			return err
		}
		for _, p := range c.partitions() {
			if _, err := items.CreateBucketIfNotExists([]byte("r" + p.rng.ID)); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketColls).Put(collKey(c.db.meta.ID, c.meta.ID), data)
	})
}

func (d *disk) deleteContainer(c *container) error {
	return d.db.Update(func(tx *bolt.Tx) error { return deleteContainerTx(tx, c) })
}

func deleteContainerTx(tx *bolt.Tx, c *container) error {
	items := tx.Bucket(bucketItems)
	if items.Bucket([]byte(c.meta.RID)) != nil {
		if err := items.DeleteBucket([]byte(c.meta.RID)); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketColls).Delete(collKey(c.db.meta.ID, c.meta.ID))
}

// Item records come in two layouts, told apart by their first byte.
//
// Version 2, written since the 16-bit lengths of version 1 turned out too small (a
// partition key of 11,000 '<' is 66,000 bytes of escaped JSON): the byte recordV2, then
// seq as a uvarint, lsn and ts as varints, the id, the partition key, the rid and the
// etag, then the body (the rest of the record). A string is a uvarint length and its
// bytes; the partition key is a uvarint component count and, per component, its kind
// byte and its value: a string, 8 bytes of float64 bits for a number, one byte for a
// boolean, nothing for null and undefined. Lengths have no limit of their own, and the
// key comes back bit for bit, without a JSON round trip.
//
// Version 1: seq, lsn and ts as 8 big-endian bytes each, then the id, the partition key's
// header JSON, the rid and the etag, each after a 16-bit big-endian length, then the body.
// Its first byte is the top byte of seq, which is 0: seq counts the documents ever
// created, and never reaches 2^56.
const (
	recordV1 = 0x00
	recordV2 = 0x02
)

func encodeItem(it diskItem) []byte {
	n := 1 + 3*binary.MaxVarintLen64 + 4*binary.MaxVarintLen64 + len(it.id) + len(it.rid) + len(it.etag) + len(it.body)
	for _, c := range it.pk {
		n += 1 + binary.MaxVarintLen64 + len(c.Str) + 8
	}
	b := make([]byte, 0, n)
	b = append(b, recordV2)
	b = binary.AppendUvarint(b, it.seq)
	b = binary.AppendVarint(b, it.lsn)
	b = binary.AppendVarint(b, it.ts)
	b = appendRecordString(b, it.id)
	b = binary.AppendUvarint(b, uint64(len(it.pk)))
	for _, c := range it.pk {
		b = append(b, byte(c.Kind))
		switch c.Kind {
		case cosmos.KindString:
			b = appendRecordString(b, c.Str)
		case cosmos.KindNumber:
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(c.Num))
		case cosmos.KindBool:
			v := byte(0)
			if c.Bool {
				v = 1
			}
			b = append(b, v)
		}
	}
	b = appendRecordString(b, it.rid)
	b = appendRecordString(b, it.etag)
	return append(b, it.body...)
}

func appendRecordString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errRecordTruncated = errors.New("item record is truncated")

// decodeItem reads a record of either version. It never panics, whatever the bytes.
func decodeItem(b []byte) (diskItem, error) {
	return decodeItemKey(b, "")
}

// decodeItemKey is decodeItem for a record stored under key (empty when unknown), which
// tells apart the candidate readings of a damaged version 1 record.
func decodeItemKey(b []byte, key string) (diskItem, error) {
	if len(b) == 0 {
		return diskItem{}, errRecordTruncated
	}
	switch b[0] {
	case recordV2:
		return decodeItemV2(b[1:])
	case recordV1:
		return decodeItemV1(b, key)
	}
	return diskItem{}, fmt.Errorf("item record has an unknown version %d (written by a newer cosmosctl?)", b[0])
}

// recordReader consumes a version 2 record; the first error sticks.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) fail() {
	if r.err == nil {
		r.err = errRecordTruncated
	}
	r.b = nil
}

func (r *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *recordReader) string() string { return string(r.bytes(r.uvarint())) }

func decodeItemV2(b []byte) (diskItem, error) {
	r := &recordReader{b: b}
	var it diskItem
	it.seq = r.uvarint()
	it.lsn = r.varint()
	it.ts = r.varint()
	it.id = r.string()
	n := r.uvarint()
	// Every component takes at least one byte, which bounds the allocation.
	if n == 0 || n > uint64(len(r.b)) {
		if r.err == nil {
			r.err = fmt.Errorf("item record has a bad partition key: %d components", n)
		}
		return it, r.err
	}
	it.pk = make(cosmos.PartitionKey, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		kind := r.bytes(1)
		if r.err != nil {
			break
		}
		c := cosmos.Component{Kind: cosmos.ComponentKind(kind[0])}
		switch c.Kind {
		case cosmos.KindUndefined, cosmos.KindNull:
		case cosmos.KindBool:
			v := r.bytes(1)
			if r.err == nil && v[0] > 1 {
				return it, fmt.Errorf("item record has a bad partition key: boolean byte %d", v[0])
			}
			c.Bool = r.err == nil && v[0] == 1
		case cosmos.KindNumber:
			if v := r.bytes(8); r.err == nil {
				c.Num = math.Float64frombits(binary.BigEndian.Uint64(v))
			}
		case cosmos.KindString:
			c.Str = r.string()
		default:
			return it, fmt.Errorf("item record has a bad partition key: component kind %d", c.Kind)
		}
		it.pk = append(it.pk, c)
	}
	it.rid = r.string()
	it.etag = r.string()
	if r.err != nil {
		return diskItem{}, r.err
	}
	it.body = append([]byte(nil), r.b...)
	return it, nil
}

// decodeItemV1 reads the old layout. A partition key whose JSON was longer than 65,535
// bytes was written with its length cut to the low 16 bits, which made the whole file
// unreadable; such a record is read back by trying the lengths that agree with those
// 16 bits (n + k·65,536) and keeping the one under which the key parses and, when the
// record's bolt key is known, the key, the partition key and the id agree.
func decodeItemV1(b []byte, key string) (diskItem, error) {
	var it diskItem
	if len(b) < 24 {
		return it, errRecordTruncated
	}
	it.seq = binary.BigEndian.Uint64(b)
	it.lsn = int64(binary.BigEndian.Uint64(b[8:]))
	it.ts = int64(binary.BigEndian.Uint64(b[16:]))
	b = b[24:]
	field := func(b []byte, extra int) (string, []byte, bool) {
		if len(b) < 2 {
			return "", nil, false
		}
		n := int(binary.BigEndian.Uint16(b)) + extra
		if len(b)-2 < n {
			return "", nil, false
		}
		return string(b[2 : 2+n]), b[2+n:], true
	}
	id, b, ok := field(b, 0)
	if !ok {
		return it, errRecordTruncated
	}
	it.id = id
	var firstErr error
	for extra := 0; extra <= len(b); extra += 1 << 16 {
		pkJSON, rest, ok := field(b, extra)
		if !ok {
			break
		}
		pk, err := cosmos.ParsePartitionKeyJSON(pkJSON)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("item record has a bad partition key: %v", err)
			}
			continue
		}
		rid, rest, ok1 := field(rest, 0)
		etag, rest, ok2 := field(rest, 0)
		if !ok1 || !ok2 {
			continue
		}
		if extra > 0 && key != "" && itemKey(pk, id) != key {
			continue
		}
		it.pk, it.rid, it.etag = pk, rid, etag
		it.body = append([]byte(nil), rest...)
		return it, nil
	}
	if firstErr == nil {
		firstErr = errRecordTruncated
	}
	return diskItem{}, firstErr
}

func (d *disk) putItem(c *container, rangeID, key string, it diskItem, docSeq uint64) error {
	rec := encodeItem(it)
	return d.rangeWrite(c, rangeID, it.lsn, docSeq, func(rb *bolt.Bucket) error {
		return rb.Put([]byte(key), rec)
	})
}

// rangeWrite runs write over the bucket of one partition key range's documents, in one
// transaction with what every document write records beside it: the range's LSN and
// (when it moved on) the document sequence. docSeq 0 leaves the sequence alone.
func (d *disk) rangeWrite(c *container, rangeID string, lsn int64, docSeq uint64, write func(rb *bolt.Bucket) error) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		items := tx.Bucket(bucketItems).Bucket([]byte(c.meta.RID))
		if items == nil {
			return fmt.Errorf("container %s has no bucket", c.meta.ID)
		}
		// Concurrent writes to different partitions may commit out of order; the
		// counter only ever moves forward, so a deleted document's _rid is never reused.
		meta := tx.Bucket(bucketMeta)
		if docSeq > getUint64(meta, keyDocSeq) {
			if err := putUint64(meta, keyDocSeq, docSeq); err != nil {
				return err
			}
		}
		if err := putUint64(items.Bucket(keyLSN), []byte(rangeID), uint64(lsn)); err != nil {
			return err
		}
		return write(items.Bucket([]byte("r" + rangeID)))
	})
}

func (d *disk) deleteItem(c *container, rangeID, key string, lsn int64) error {
	return d.rangeWrite(c, rangeID, lsn, 0, func(rb *bolt.Bucket) error {
		return rb.Delete([]byte(key))
	})
}

// load rebuilds the in-memory store from disk. Every loaded document is visible in every
// region: replication that was in flight at the crash has, in effect, completed.
//
// A record that cannot be read is skipped with a notice on notices, and counted in
// s.skipped, rather than failing the start: one damaged record must not make every other
// document of the file unreachable. The record stays in the file untouched (a later
// cosmosctl may read it), until a write to the same document replaces it.
func (d *disk) load(s *store, notices io.Writer) error {
	if notices == nil {
		notices = os.Stderr
	}
	path := d.db.Path()
	skip := func(what string, err error) {
		s.skipped++
		fmt.Fprintf(notices, "cosmosctl emulator: %s: skipped %s: %v\n", path, what, err)
	}
	err := d.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		s.ridSeq = uint32(getUint64(meta, keyRIDSeq))
		s.docSeq.Store(getUint64(meta, keyDocSeq))
		err := tx.Bucket(bucketDBs).ForEach(func(k, v []byte) error {
			var dd diskDatabase
			if err := json.Unmarshal(v, &dd); err != nil {
				skip(fmt.Sprintf("database record %q", k), err)
				return nil
			}
			s.dbs[dd.Meta.ID] = &database{meta: dd.Meta, seq: dd.Seq, colls: map[string]*container{}}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketColls).ForEach(func(k, v []byte) error {
			var dc diskContainer
			if err := json.Unmarshal(v, &dc); err != nil {
				skip(fmt.Sprintf("container record %q", k), err)
				return nil
			}
			db := s.dbs[dc.DB]
			if db == nil {
				return nil
			}
			c := newContainer(db, dc.Meta.ID, dc.Seq, dc.Meta.PartitionKey, dc.Ranges, dc.Meta.TS)
			c.meta = dc.Meta
			c.setResource(dc.Meta)
			db.colls[dc.Meta.ID] = c
			items := tx.Bucket(bucketItems).Bucket([]byte(c.meta.RID))
			if items == nil {
				return nil
			}
			for _, p := range c.partitions() {
				if lsns := items.Bucket(keyLSN); lsns != nil {
					p.lsn = int64(getUint64(lsns, []byte(p.rng.ID)))
				}
				rb := items.Bucket([]byte("r" + p.rng.ID))
				if rb == nil {
					continue
				}
				err := rb.ForEach(func(k, v []byte) error {
					it, err := decodeItemKey(v, string(k))
					if err != nil {
						skip(fmt.Sprintf("a document of container %s/%s (partition key range %s, record key %q)", dc.DB, c.meta.ID, p.rng.ID, truncateForNotice(k)), err)
						return nil
					}
					if it.seq > s.docSeq.Load() {
						s.docSeq.Store(it.seq)
					}
					p.items[string(k)] = &itemEntry{id: it.id, pk: it.pk, rid: it.rid, seq: it.seq,
						versions: []*itemVersion{{body: it.body, etag: it.etag, lsn: it.lsn, ts: it.ts, ttl: itemTTL(it.body)}}}
					return nil
				})
				if err != nil {
					return err
				}
				p.rebuildCreationOrder()
			}
			return nil
		})
	})
	if err == nil {
		for _, c := range s.allContainers() {
			c.indexUniqueKeys(s.clock.Now())
		}
	}
	if err == nil && s.skipped > 0 {
		fmt.Fprintf(notices, "cosmosctl emulator: %s: %d unreadable record(s) skipped; everything else is loaded\n", path, s.skipped)
	}
	return err
}

// truncateForNotice keeps a notice about a record with a 2 KB key on one screen.
func truncateForNotice(k []byte) []byte {
	if len(k) > 120 {
		return append(k[:120:120], "…"...)
	}
	return k
}

// SkippedRecords is the number of unreadable records the start skipped in the data file.
func (s *Server) SkippedRecords() int { return s.store.skipped }
