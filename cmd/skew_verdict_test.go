package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/engine"
)

// load is a range's share of a sample in a verdict case: its RU % and 429 %, and the
// busiest key with its share of the range's RU ("" for none).
type load struct {
	ru, throttled float64
	key           string
	keyRU         float64
}

// storage is a range's share of the storage, and the largest key the service lists
// with its share of the range ("" for none).
type storage struct {
	percent float64
	key     string
	keyPct  float64
}

func verdictReport(stats []storage, loads []load, throttled int64) skewReport {
	n := max(len(stats), len(loads))
	rep := skewReport{Throughput: skewThroughput{Mode: "manual", PartitionMaxRUPerSecond: skewPartitionMaxRU, InstantMaxRUPerSecond: n * skewPartitionMaxRU}}
	ru := 400
	rep.Throughput.RUPerSecond = &ru
	for i := range n {
		r := skewRange{ID: string(rune('0' + i))}
		if i < len(stats) {
			p := stats[i].percent
			r.StoragePercent = &p
			if stats[i].key != "" {
				kp := stats[i].keyPct
				r.LargestPartitionKeys = []skewKeySize{{PartitionKey: json.RawMessage(`["` + stats[i].key + `"]`), PercentOfRange: &kp}}
			}
		}
		if i < len(loads) {
			l := loads[i]
			r.Sample = &skewRangeSample{Requests: 10, RequestChargePercent: l.ru, ThrottledPercent: l.throttled}
			if l.key != "" {
				r.Sample.TopPartitionKey = &skewKeyLoad{PartitionKey: json.RawMessage(`["` + l.key + `"]`), RequestChargePercent: l.keyRU}
			}
		}
		rep.Ranges = append(rep.Ranges, r)
	}
	if loads != nil {
		rep.Sample = &skewSample{Requests: 10 * int64(n), Throttled: throttled}
	}
	return rep
}

func TestSkewVerdict(t *testing.T) {
	even4 := []load{{25, 25, "", 0}, {25, 25, "", 0}, {25, 25, "", 0}, {25, 25, "", 0}}
	for _, tc := range []struct {
		name     string
		rep      skewReport
		kind     string
		rangeID  string // "" for none
		key      string // "" for none
		text     string // the whole text, or a prefix ending in "…"
		notInTxt string
	}{
		{"one range cannot tell a hot partition from too few RU",
			verdictReport(nil, []load{{100, 100, "", 0}}, 7), skewOnePartition, "0", "",
			"one physical partition: a hot partition cannot be told from too few RU; the sample met 7 429s: raise throughput (one physical partition serves up to 10,000 RU/s)", ""},
		{"most of the 429s on one range is a hot partition, named with the key the service lists",
			verdictReport([]storage{{10, "", 0}, {20, "", 0}, {30, "", 0}, {40, "tenant-42", 38}},
				[]load{{10, 2, "", 0}, {9, 3, "", 0}, {10, 2, "", 0}, {71, 93, "", 0}}, 100),
			skewHotPartition, "3", "tenant-42", "hot partition: 71 % of RU and 93 % of 429s on range 3 (key tenant-42 holds 38 % of its storage)", ""},
		{"twice the fair share of RU is a hot partition even without 429s, named with the sample's key",
			verdictReport(nil, []load{{55, 0, "hot", 90}, {15, 0, "", 0}, {15, 0, "", 0}, {15, 0, "", 0}}, 0),
			skewHotPartition, "0", "hot", "hot partition: 55 % of RU on range 0, and no 429s in the sample (key hot took 90 % of its RU in the sample)", ""},
		{"the sample's key wins over the storage's when both are named",
			verdictReport([]storage{{70, "big", 50}, {10, "", 0}, {10, "", 0}, {10, "", 0}},
				[]load{{80, 90, "busy", 75}, {5, 4, "", 0}, {10, 4, "", 0}, {5, 2, "", 0}}, 50),
			skewHotPartition, "0", "busy", "hot partition: 80 % of RU and 90 % of 429s on range 0 (key big holds 50 % of its storage; key busy took 75 % of its RU in the sample)", ""},
		{"a key both the service and the sample name is named once",
			verdictReport([]storage{{70, "big", 50}, {10, "", 0}, {10, "", 0}, {10, "", 0}},
				[]load{{80, 90, "big", 75}, {5, 4, "", 0}, {10, 4, "", 0}, {5, 2, "", 0}}, 50),
			skewHotPartition, "0", "big", "hot partition: 80 % of RU and 90 % of 429s on range 0 (key big holds 50 % of its storage and took 75 % of its RU in the sample)", ""},
		{"a key with a small share of its range is not named",
			verdictReport([]storage{{70, "big", 10}, {10, "", 0}, {10, "", 0}, {10, "", 0}},
				[]load{{80, 90, "many", 30}, {5, 4, "", 0}, {10, 4, "", 0}, {5, 2, "", 0}}, 50),
			skewHotPartition, "0", "", "hot partition: 80 % of RU and 90 % of 429s on range 0", "key"},
		{"429s spread evenly: raise throughput",
			verdictReport(nil, even4, 400), skewEvenlyLoaded, "", "",
			"evenly loaded: raise throughput (400 429s spread over 4 ranges, at most 25 % on range 0; 4 ranges serve up to 40,000 RU/s without a split)", ""},
		{"with two ranges, 60 % of the 429s and RU is not yet hot (the hot share is 2/3)",
			verdictReport(nil, []load{{60, 60, "", 0}, {40, 40, "", 0}}, 10), skewEvenlyLoaded, "", "", "evenly loaded: raise throughput …", ""},
		{"with two ranges, 70 % of the RU is hot",
			verdictReport(nil, []load{{70, 0, "", 0}, {30, 0, "", 0}}, 0), skewHotPartition, "0", "", "hot partition: 70 % of RU on range 0, and no 429s in the sample", ""},
		{"more than half of the 429s on one of four ranges is hot, whatever its RU",
			verdictReport(nil, []load{{30, 51, "", 0}, {25, 17, "", 0}, {25, 16, "", 0}, {20, 16, "", 0}}, 100), skewHotPartition, "0", "", "hot partition: 30 % of RU and 51 % of 429s on range 0", ""},
		{"no 429s and no hot range: not throttled",
			verdictReport(nil, []load{{30, 0, "", 0}, {25, 0, "", 0}, {25, 0, "", 0}, {20, 0, "", 0}}, 0), skewNotThrottled, "", "",
			"not throttled: no 429s in the sample, and no range took 50 % or more of its RU (at most 30 %, on range 0)", ""},
		{"without a sample, one range with most of the storage is a storage skew",
			verdictReport([]storage{{10, "", 0}, {62, "tenant-7", 38}, {14, "", 0}, {14, "", 0}}, nil, 0), skewStorageSkew, "1", "tenant-7",
			"storage skew: range 1 holds 62 % of the storage (key tenant-7 holds 38 % of its storage); --sample DURATION with --query or --ids tells a hot partition from too few RU", ""},
		{"without a sample, storage spread evenly",
			verdictReport([]storage{{25, "", 0}, {30, "", 0}, {25, "", 0}, {20, "", 0}}, nil, 0), skewStorageEven, "", "", "storage evenly spread (at most 30 %, on range 1); …", ""},
		{"without a sample, an empty container has no storage to judge",
			verdictReport([]storage{{0, "", 0}, {0, "", 0}}, nil, 0), skewStorageEven, "", "", "no storage to judge: the ranges report no data; …", ""},
		{"without a sample or statistics there is nothing to judge by",
			verdictReport(nil, nil, 0), skewUnknown, "", "", "no partition key ranges: nothing to judge", ""},
		{"ranges without statistics and no sample",
			skewReport{Ranges: []skewRange{{ID: "0"}, {ID: "1"}}}, skewUnknown, "", "", "the service reports no partition statistics; …", ""},
		{"a sample that sent nothing is judged by the storage",
			func() skewReport {
				r := verdictReport([]storage{{80, "", 0}, {20, "", 0}}, []load{{0, 0, "", 0}, {0, 0, "", 0}}, 0)
				r.Sample.Requests = 0
				return r
			}(), skewStorageSkew, "0", "", "storage skew: range 0 holds 80 % of the storage; …", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := skewVerdictOf(tc.rep)
			if v.Kind != tc.kind {
				t.Errorf("kind %q, want %q (%s)", v.Kind, tc.kind, v.Text)
			}
			if got := derefString(v.RangeID); got != tc.rangeID {
				t.Errorf("range %q, want %q", got, tc.rangeID)
			}
			if got := keyOf(v.PartitionKey); got != tc.key {
				t.Errorf("key %q, want %q", got, tc.key)
			}
			if prefix, ok := strings.CutSuffix(tc.text, "…"); ok {
				if !strings.HasPrefix(v.Text, prefix) {
					t.Errorf("text %q, want it to start %q", v.Text, prefix)
				}
			} else if v.Text != tc.text {
				t.Errorf("text\n %q, want\n %q", v.Text, tc.text)
			}
			if tc.notInTxt != "" && strings.Contains(v.Text, tc.notInTxt) {
				t.Errorf("text %q must not say %q", v.Text, tc.notInTxt)
			}
		})
	}
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func keyOf(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	return keyText(raw)
}

func TestSkewKeyText(t *testing.T) {
	for raw, want := range map[string]string{
		`["tenant-42"]`:     "tenant-42",
		`[42]`:              "42",
		`["acme","user-7"]`: `["acme","user-7"]`,
		`[{}]`:              "[{}]",
		`[null]`:            "null",
		`"bare"`:            `"bare"`,
	} {
		if got := keyText(json.RawMessage(raw)); got != want {
			t.Errorf("keyText(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestSkewTableGolden: the table a person reads, for a report with a largest key the
// service lists, a sample and a hot verdict; and under -o tsv, the table alone.
func TestSkewTableGolden(t *testing.T) {
	rep := verdictReport([]storage{{10, "", 0}, {20, "", 0}, {30, "", 0}, {40, "tenant-42", 38}},
		[]load{{10, 2, "tenant-1", 40}, {9, 3, "", 0}, {10, 2, "tenant-9", 100}, {71, 93, "tenant-42", 88}}, 100)
	rep.Database, rep.Container = "app", "items"
	per := 100.0
	rep.Throughput.PerRangeRUPerSecond = &per
	items, size := int64(1000), int64(2048)
	for i := range rep.Ranges {
		r := &rep.Ranges[i]
		r.DocumentCount, r.SizeKB = &items, &size
		r.Sample.Requests, r.Sample.RequestCharge, r.Sample.Throttled = int64(100*(i+1)), float64(100*(i+1))+0.5, int64(i)
		if r.LargestPartitionKeys == nil {
			r.LargestPartitionKeys = []skewKeySize{}
		}
	}
	rep.Sample = &skewSample{Source: "ids", IDs: 40, Concurrency: 4, SampleMs: 30000, DurationMs: 30000, Requests: 1000, RequestCharge: 1002, Throttled: 100}
	rep.Verdict = skewVerdictOf(rep)
	io, out, errOut := testIO()
	if err := printSkew(io, true, rep); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", "skew_table.golden"), out.String()+"--- stderr\n"+errOut.String())
}

// TestSkewFillsTheServicesStatistics: the service's statistics, as the .NET SDK
// documents them, become each range's share of the storage and its listed keys, largest
// first; a key the service sizes above its range (it samples the two apart) holds 100 %.
func TestSkewFillsTheServicesStatistics(t *testing.T) {
	distinct := int64(12)
	rep := skewReport{Ranges: []skewRange{{ID: "0"}, {ID: "1"}, {ID: "2"}}}
	fillStatistics(&rep, map[string]engine.RangeStatistics{
		"0": {ID: "0", SizeInKB: 1000, DocumentCount: 40},
		"1": {ID: "1", SizeInKB: 5000, DocumentCount: 150, SampledDistinctPartitionKeyCount: &distinct, PartitionKeys: []engine.PartitionKeyStatistics{
			{PartitionKey: json.RawMessage(`["small"]`), SizeInKB: 500},
			{PartitionKey: json.RawMessage(`["tenant-42"]`), SizeInKB: 1900},
		}},
		"2": {ID: "2", SizeInKB: 1000, PartitionKeys: []engine.PartitionKeyStatistics{{PartitionKey: json.RawMessage(`["huge"]`), SizeInKB: 2500}}},
	})
	r := rep.Ranges[1]
	if *r.StoragePercent != 71.4 || *r.DocumentCount != 150 || *r.SampledDistinctPartitionKeys != 12 || *rep.Ranges[0].StoragePercent != 14.3 {
		t.Fatalf("range 1: %+v", r)
	}
	if len(r.LargestPartitionKeys) != 2 || keyText(r.LargestPartitionKeys[0].PartitionKey) != "tenant-42" || *r.LargestPartitionKeys[0].PercentOfRange != 38 ||
		*r.LargestPartitionKeys[1].PercentOfRange != 10 {
		t.Fatalf("range 1's keys: %+v", r.LargestPartitionKeys)
	}
	if p := *rep.Ranges[2].LargestPartitionKeys[0].PercentOfRange; p != 100 {
		t.Fatalf("a key sized above its range holds %v %%", p)
	}
	v := skewVerdictOf(rep)
	if v.Kind != skewStorageSkew || *v.RangeID != "1" || !strings.Contains(v.Text, "key tenant-42 holds 38 % of its storage") {
		t.Fatalf("verdict %+v", v)
	}
}
