package emulator

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
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

func openDisk(dir string) (*disk, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	path := filepath.Join(dir, DataFileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("data file %s is in use by another emulator: stop it or choose another --data-dir", path)
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

func (d *disk) putContainer(c *container, ridSeq uint32) error {
	data, err := json.Marshal(diskContainer{DB: c.db.meta.ID, Meta: c.meta, Seq: c.seq, Ranges: len(c.parts)})
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
		for _, p := range c.parts {
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

// Item records: seq, lsn, ts (8 bytes each), then length-prefixed id, partition key
// JSON, rid and etag, then the body.
func encodeItem(it diskItem) []byte {
	pk := it.pk.JSON()
	b := make([]byte, 0, 24+8+len(it.id)+len(pk)+len(it.rid)+len(it.etag)+len(it.body))
	b = binary.BigEndian.AppendUint64(b, it.seq)
	b = binary.BigEndian.AppendUint64(b, uint64(it.lsn))
	b = binary.BigEndian.AppendUint64(b, uint64(it.ts))
	for _, s := range []string{it.id, pk, it.rid, it.etag} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	return append(b, it.body...)
}

func decodeItem(b []byte) (diskItem, error) {
	var it diskItem
	if len(b) < 24 {
		return it, errors.New("item record is truncated")
	}
	it.seq = binary.BigEndian.Uint64(b)
	it.lsn = int64(binary.BigEndian.Uint64(b[8:]))
	it.ts = int64(binary.BigEndian.Uint64(b[16:]))
	b = b[24:]
	var fields [4]string
	for i := range fields {
		if len(b) < 2 {
			return it, errors.New("item record is truncated")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			return it, errors.New("item record is truncated")
		}
		fields[i] = string(b[2 : 2+n])
		b = b[2+n:]
	}
	it.id, it.rid, it.etag = fields[0], fields[2], fields[3]
	pk, err := cosmos.ParsePartitionKeyJSON(fields[1])
	if err != nil {
		return it, fmt.Errorf("item record has a bad partition key: %v", err)
	}
	it.pk = pk
	it.body = append([]byte(nil), b...)
	return it, nil
}

func (d *disk) putItem(c *container, rangeID, key string, it diskItem, docSeq uint64) error {
	rec := encodeItem(it)
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
		if err := putUint64(items.Bucket(keyLSN), []byte(rangeID), uint64(it.lsn)); err != nil {
			return err
		}
		return items.Bucket([]byte("r"+rangeID)).Put([]byte(key), rec)
	})
}

func (d *disk) deleteItem(c *container, rangeID, key string, lsn int64) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		items := tx.Bucket(bucketItems).Bucket([]byte(c.meta.RID))
		if items == nil {
			return fmt.Errorf("container %s has no bucket", c.meta.ID)
		}
		if err := putUint64(items.Bucket(keyLSN), []byte(rangeID), uint64(lsn)); err != nil {
			return err
		}
		return items.Bucket([]byte("r" + rangeID)).Delete([]byte(key))
	})
}

// load rebuilds the in-memory store from disk. Every loaded document is visible in every
// region: replication that was in flight at the crash has, in effect, completed.
func (d *disk) load(s *store) error {
	return d.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		s.ridSeq = uint32(getUint64(meta, keyRIDSeq))
		s.docSeq.Store(getUint64(meta, keyDocSeq))
		err := tx.Bucket(bucketDBs).ForEach(func(k, v []byte) error {
			var dd diskDatabase
			if err := json.Unmarshal(v, &dd); err != nil {
				return fmt.Errorf("database record %q: %v", k, err)
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
				return fmt.Errorf("container record %q: %v", k, err)
			}
			db := s.dbs[dc.DB]
			if db == nil {
				return nil
			}
			c := newContainer(db, dc.Meta.ID, dc.Seq, dc.Meta.PartitionKey, dc.Ranges, dc.Meta.TS)
			c.meta = dc.Meta
			db.colls[dc.Meta.ID] = c
			items := tx.Bucket(bucketItems).Bucket([]byte(c.meta.RID))
			if items == nil {
				return nil
			}
			for _, p := range c.parts {
				p.lsn = int64(getUint64(items.Bucket(keyLSN), []byte(p.rng.ID)))
				rb := items.Bucket([]byte("r" + p.rng.ID))
				if rb == nil {
					continue
				}
				err := rb.ForEach(func(k, v []byte) error {
					it, err := decodeItem(v)
					if err != nil {
						return fmt.Errorf("container %s: %v", c.meta.ID, err)
					}
					if it.seq > s.docSeq.Load() {
						s.docSeq.Store(it.seq)
					}
					p.items[string(k)] = &itemEntry{id: it.id, pk: it.pk, rid: it.rid, seq: it.seq,
						versions: []*itemVersion{{body: it.body, etag: it.etag, lsn: it.lsn, ts: it.ts}}}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
}
