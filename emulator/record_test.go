package emulator

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// encodeItemV1 is the record layout written before version 2, byte for byte, 16-bit
// length truncation included: the tests build old data files with it.
func encodeItemV1(it diskItem) []byte {
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

func sameItem(a, b diskItem) bool {
	if a.id != b.id || a.rid != b.rid || a.seq != b.seq || a.lsn != b.lsn || a.ts != b.ts || a.etag != b.etag ||
		!bytes.Equal(a.body, b.body) || len(a.pk) != len(b.pk) {
		return false
	}
	for i := range a.pk {
		x, y := a.pk[i], b.pk[i]
		if x.Kind != y.Kind || x.Str != y.Str || x.Bool != y.Bool || math.Float64bits(x.Num) != math.Float64bits(y.Num) {
			return false
		}
	}
	return true
}

// fuzzPK builds a partition key of one to three components from the fuzzer's values.
func fuzzPK(kinds uint8, s string, num float64) cosmos.PartitionKey {
	var pk cosmos.PartitionKey
	for i := 0; i <= int(kinds>>6)%3; i++ {
		c := cosmos.Component{Kind: cosmos.ComponentKind((kinds >> (2 * i)) % 5)}
		switch c.Kind {
		case cosmos.KindString:
			c.Str = s
		case cosmos.KindNumber:
			c.Num = num
		case cosmos.KindBool:
			c.Bool = kinds&1 == 1
		}
		pk = append(pk, c)
	}
	return pk
}

// FuzzRecord: every item record decodes to what was encoded, whatever the id, partition
// key and body; and decoding arbitrary bytes (a damaged file) never panics. The seeds
// are small so that the fuzzer mutates quickly; TestRecordLargeFieldsRoundTrip and
// TestRecordVersion1Decodes cover the fields over 64 KiB.
func FuzzRecord(f *testing.F) {
	f.Add(uint64(1), int64(3), int64(1700000000), "a", uint8(4), "p1", 1.5, "AAAA", `"e"`, []byte(`{"id":"a"}`), []byte{recordV2, 1})
	f.Add(uint64(0), int64(-1), int64(0), "", uint8(0xff), strings.Repeat("<", 40), math.NaN(), "", "", []byte(nil), []byte{0})
	f.Add(uint64(1<<60), int64(math.MinInt64), int64(math.MaxInt64), "é/\x00", uint8(0x93), strings.Repeat("é", 40), math.Inf(-1), "r", "", []byte("\xff"),
		encodeItemV1(diskItem{id: "x", pk: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "<é"}}, rid: "r", etag: "e", body: []byte("{}")}))
	f.Add(uint64(7), int64(7), int64(7), "id", uint8(1), "", 0.0, "", "", []byte("{}"), []byte{recordV2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, seq uint64, lsn, ts int64, id string, kinds uint8, pkStr string, num float64, rid, etag string, body, raw []byte) {
		_, _ = decodeItem(raw)
		_, _ = decodeItemKey(raw, id)

		it := diskItem{id: id, pk: fuzzPK(kinds, pkStr, num), rid: rid, seq: seq, lsn: lsn, ts: ts, etag: etag, body: body}
		got, err := decodeItem(encodeItem(it))
		if err != nil {
			t.Fatalf("decoding an encoded record: %v", err)
		}
		if !sameItem(got, it) {
			t.Fatalf("round trip changed the record:\n got  %+v\n want %+v", got, it)
		}
	})
}

// TestRecordLargeFieldsRoundTrip: fields far over the 64 KiB that version 1 could hold.
func TestRecordLargeFieldsRoundTrip(t *testing.T) {
	for _, s := range []string{strings.Repeat("<", 11000), strings.Repeat("é", 40000), strings.Repeat("x", 1<<20)} {
		it := diskItem{id: s, pk: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: s}, {Kind: cosmos.KindNumber, Num: -0.0}}, rid: "r", etag: s, body: []byte(s), seq: 9, lsn: 8, ts: 7}
		got, err := decodeItem(encodeItem(it))
		if err != nil || !sameItem(got, it) {
			t.Errorf("a %d-byte field does not round-trip: %v", len(s), err)
		}
	}
}

// TestRecordVersion1Decodes: records as the emulator wrote them before version 2,
// including one whose partition key JSON overflowed its 16-bit length.
func TestRecordVersion1Decodes(t *testing.T) {
	long := strings.Repeat("<", 11000) // 66,000 bytes of header JSON: \u003c each
	cases := []struct {
		name string
		it   diskItem
	}{
		{"a short key", diskItem{id: "a", pk: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "p1"}}, rid: "rid", seq: 1, lsn: 2, ts: 3, etag: `"e"`, body: []byte(`{"id":"a"}`)}},
		{"a hierarchical key", diskItem{id: "b", pk: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "t"}, {Kind: cosmos.KindNumber, Num: 3}, {Kind: cosmos.KindNull}}, rid: "r", seq: 5, etag: "e", body: []byte(`{}`)}},
		{"the none key", diskItem{id: "c", pk: cosmos.NonePK, rid: "r", etag: "e", body: []byte(`{}`)}},
		{"a key over 64 KiB of JSON, length truncated", diskItem{id: "d", pk: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: long}}, rid: "r", seq: 4, etag: "e", body: []byte(`{"id":"d"}`)}},
		{"two such keys", diskItem{id: "e", pk: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: long + long}}, rid: "r", etag: "e", body: []byte(`{}`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := encodeItemV1(tc.it)
			if old[0] != recordV1 {
				t.Fatalf("a version 1 record starts with %#x", old[0])
			}
			got, err := decodeItemKey(old, itemKey(tc.it.pk, tc.it.id))
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if !sameItem(got, tc.it) {
				t.Fatalf("decoded %+v, want %+v", got, tc.it)
			}
		})
	}
}

// oldFormatFile writes, into a persistent emulator's data directory, documents as the
// emulator wrote them before version 2, plus whatever extra records add puts in the
// container's buckets. It returns the ids of the old documents and their partition keys.
func oldFormatFile(t *testing.T, dir string, add func(items *bolt.Bucket, c *container)) map[string]cosmos.PartitionKey {
	t.Helper()
	s := crashStartPersistent(t, dir)
	co, cerr := s.store.container("db", "items")
	if cerr != nil {
		t.Fatal(cerr)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	docs := map[string]cosmos.PartitionKey{
		"plain": {{Kind: cosmos.KindString, Str: "x"}},
		"é":     {{Kind: cosmos.KindString, Str: "é"}},
		// The key: accepted before the limit, and then the file never opened.
		"long": {{Kind: cosmos.KindString, Str: strings.Repeat("<", 11000)}},
	}
	db, err := bolt.Open(dir+"/"+DataFileName, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		items := tx.Bucket(bucketItems).Bucket([]byte(co.meta.RID))
		seq := uint64(0)
		for id, pk := range docs {
			seq++
			p := co.partitionFor(pk)
			body := []byte(`{"id":` + quoteJSON(id) + `,"pk":` + quoteJSON(pk[0].Str) + `,"_etag":"\"e` + id + `\""}`)
			rec := encodeItemV1(diskItem{id: id, pk: pk, rid: docRID(co.db.seq, co.seq, seq), seq: seq, lsn: int64(seq), ts: 1, etag: `"e` + id + `"`, body: body})
			if err := items.Bucket([]byte("r"+p.rng.ID)).Put([]byte(itemKey(pk, id)), rec); err != nil {
				return err
			}
			if err := putUint64(items.Bucket(keyLSN), []byte(p.rng.ID), seq); err != nil {
				return err
			}
		}
		if add != nil {
			add(items, co)
		}
		return putUint64(tx.Bucket(bucketMeta), keyDocSeq, seq)
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDataFileOfVersion1Opens: a data file written before the version 2 records opens,
// the 11,000-character key included, and its documents can be read, written
// and deleted; what is written now survives the next restart.
func TestDataFileOfVersion1Opens(t *testing.T) {
	dir := t.TempDir()
	docs := oldFormatFile(t, dir, nil)
	var notices bytes.Buffer
	s, err := Start(crashConfig(dir), Options{Notices: &notices})
	if err != nil {
		t.Fatalf("an emulator cannot open a data file of version 1 records: %v", err)
	}
	defer s.Close()
	if s.SkippedRecords() != 0 || notices.Len() != 0 {
		t.Errorf("skipped %d records: %s", s.SkippedRecords(), notices.String())
	}
	c := newTestClient(t, s.Key())
	for id, pk := range docs {
		resp := crashMustDo(c, s.Endpoint(), http.MethodGet, cosmos.ItemPath("db", "items", id), pkHeader(pk.JSON()), nil, http.StatusOK)
		if resp.ETag != `"e`+id+`"` || !bytes.Contains(resp.Body, []byte(`"id":`+quoteJSON(id))) {
			t.Errorf("%s: read %s (etag %s)", id, resp.Body, resp.ETag)
		}
	}
	// The document with the key over today's limit can still be removed; the others
	// can be rewritten, in version 2.
	crashMustDo(c, s.Endpoint(), http.MethodDelete, cosmos.ItemPath("db", "items", "long"), pkHeader(docs["long"].JSON()), nil, http.StatusNoContent)
	crashMustDo(c, s.Endpoint(), http.MethodPut, cosmos.ItemPath("db", "items", "plain"), pkHeader(`["x"]`), `{"id":"plain","pk":"x","n":2}`, http.StatusOK)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = crashStartPersistent(t, dir)
	c = newTestClient(t, s.Key())
	crashMustDo(c, s.Endpoint(), http.MethodGet, cosmos.ItemPath("db", "items", "long"), pkHeader(docs["long"].JSON()), nil, http.StatusNotFound)
	resp := crashMustDo(c, s.Endpoint(), http.MethodGet, cosmos.ItemPath("db", "items", "plain"), pkHeader(`["x"]`), nil, http.StatusOK)
	if !bytes.Contains(resp.Body, []byte(`"n":2`)) {
		t.Errorf("the rewritten document came back as %s", resp.Body)
	}
	crashMustDo(c, s.Endpoint(), http.MethodGet, cosmos.ItemPath("db", "items", "é"), pkHeader(docs["é"].JSON()), nil, http.StatusOK)
}

// TestDataFileWithUnreadableRecordsOpens: records that cannot be read are skipped, each
// with a notice, and counted; every other document loads.
func TestDataFileWithUnreadableRecordsOpens(t *testing.T) {
	dir := t.TempDir()
	bad := map[string][]byte{
		"empty":           {},
		"truncated v1":    {0, 0, 0, 1},
		"truncated v2":    encodeItem(diskItem{id: "t", pk: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "x"}}})[:4],
		"unknown version": {0x7f, 1, 2, 3},
		"bad key JSON":    encodeItemV1(diskItem{id: "k", pk: nil, rid: "r"}),
	}
	docs := oldFormatFile(t, dir, func(items *bolt.Bucket, c *container) {
		for name, rec := range bad {
			if err := items.Bucket([]byte("r0")).Put([]byte("bad:"+name), rec); err != nil {
				t.Fatal(err)
			}
		}
	})
	var notices bytes.Buffer
	s, err := Start(crashConfig(dir), Options{Notices: &notices})
	if err != nil {
		t.Fatalf("one bad record refuses the whole file: %v", err)
	}
	defer s.Close()
	if got := s.SkippedRecords(); got != len(bad) {
		t.Errorf("skipped %d records, want %d:\n%s", got, len(bad), notices.String())
	}
	out := notices.String()
	for name := range bad {
		if !strings.Contains(out, `"bad:`+name+`"`) {
			t.Errorf("no notice names the record %q:\n%s", name, out)
		}
	}
	if !strings.Contains(out, "5 unreadable record(s) skipped") || !strings.Contains(out, DataFileName) {
		t.Errorf("the notices do not sum up and name the file:\n%s", out)
	}
	c := newTestClient(t, s.Key())
	for id, pk := range docs {
		crashMustDo(c, s.Endpoint(), http.MethodGet, cosmos.ItemPath("db", "items", id), pkHeader(pk.JSON()), nil, http.StatusOK)
	}
}
