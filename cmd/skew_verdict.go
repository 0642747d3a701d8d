package cmd

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/internal/progress"
)

// The verdict of `cosmosctl skew`: one line that says whether a container's 429s come
// from a hot partition (one physical partition taking more than its share of the load,
// which more RU/s spread evenly over the partitions does not fix) or from too few RU/s
// for a load the partitions share evenly. It is a pure function of the report, so that
// its thresholds are specified by a table of cases (skew_verdict_test.go), and they are
// documented in the command's help (skewVerdictHelp).

// Verdict kinds: the "kind" of -o json, stable for scripts.
const (
	skewHotPartition = "hot-partition" // a range takes far more than its share of the sample
	skewEvenlyLoaded = "evenly-loaded" // 429s spread over the ranges: raise throughput
	skewNotThrottled = "not-throttled" // the sample met no 429 and no range was hot
	skewStorageSkew  = "storage-skew"  // no sample; one range holds far more than its share of the storage
	skewStorageEven  = "storage-even"  // no sample; storage spread evenly
	skewOnePartition = "one-partition" // one physical partition: nothing to compare
	skewUnknown      = "unknown"       // neither a sample nor statistics to judge by
	skewNoSampleHint = "--sample DURATION with --query or --ids tells a hot partition from too few RU"
)

const (
	// skewHotFactor: a range is hot when it takes at least this many times its fair
	// share (1 ÷ ranges) of the sample's request charge or 429s, or of the storage ...
	skewHotFactor = 2.0
	// skewHotCap: ... or at least this share, whichever is less: with two ranges twice
	// the fair share would be all of it.
	skewHotCap = 2.0 / 3
	// skewThrottledMajority: a range that met more than this share of the 429s (and its
	// hot share) is hot whatever its share of the request charge, which the 429s cap.
	skewThrottledMajority = 0.5
	// skewKeyStorageShare: a key the service lists holding at least this share of its
	// range's storage is named in the verdict.
	skewKeyStorageShare = 0.2
	// skewKeyLoadShare: a sampled key that took at least this share of its range's
	// request charge (or of its 429s) is named in the verdict.
	skewKeyLoadShare = 0.5
)

const skewVerdictHelp = `
The verdict, in order (n is the number of ranges, a range's fair share 1/n, and
its hot share the lesser of 2/n and 2/3):
  one-partition   n is 1: a hot partition cannot be told from too few RU.
  hot-partition   with a sample: a range met more than half of the 429s and at
                  least its hot share of them, or took at least its hot share of
                  the request charge.
  evenly-loaded   with a sample that met 429s and no hot range: raise throughput.
  not-throttled   with a sample that met no 429 and no hot range.
  storage-skew    without a sample: a range holds at least its hot share of the
                  storage the statistics report.
  storage-even    without a sample: no range does.
  unknown         without a sample or statistics.
A verdict about a range names a key when the service lists one holding at least
20 % of the range's storage (partitionKeys: the service lists only its largest
logical partitions, about 1 GB and more) or, with --ids, when one key took at
least half of the range's request charge or 429s in the sample.`

// skewHotShare is the share of n ranges' load (or storage) that makes one range hot.
func skewHotShare(n int) float64 {
	return min(skewHotFactor/float64(n), skewHotCap)
}

// skewVerdictOf judges the report: its ranges' statistics and sample.
func skewVerdictOf(rep skewReport) skewVerdict {
	n := len(rep.Ranges)
	sampled := rep.Sample != nil && rep.Sample.Requests > 0
	switch {
	case n == 0:
		return skewVerdict{Kind: skewUnknown, Text: "no partition key ranges: nothing to judge"}
	case n == 1:
		text := "one physical partition: a hot partition cannot be told from too few RU"
		if sampled && rep.Sample.Throttled > 0 {
			text += fmt.Sprintf("; the sample met %s: raise throughput (one physical partition serves up to %s RU/s)",
				plural429(rep.Sample.Throttled), progress.Thousands(skewPartitionMaxRU))
		}
		id := rep.Ranges[0].ID
		return skewVerdict{Kind: skewOnePartition, Text: text, RangeID: &id}
	case sampled:
		return sampleVerdict(rep)
	}
	return storageVerdict(rep)
}

// sampleVerdict judges the sample's request charge and 429s by range.
func sampleVerdict(rep skewReport) skewVerdict {
	n := len(rep.Ranges)
	hotShare := skewHotShare(n) * 100
	byRU, by429 := 0, 0
	for i, r := range rep.Ranges {
		if r.Sample == nil {
			continue
		}
		if top := rep.Ranges[byRU].Sample; top == nil || r.Sample.RequestChargePercent > top.RequestChargePercent {
			byRU = i
		}
		if top := rep.Ranges[by429].Sample; top == nil || r.Sample.ThrottledPercent > top.ThrottledPercent {
			by429 = i
		}
	}
	hot := -1
	if s := rep.Ranges[by429].Sample; rep.Sample.Throttled > 0 && s != nil && s.ThrottledPercent > skewThrottledMajority*100 && s.ThrottledPercent >= hotShare {
		hot = by429
	} else if s := rep.Ranges[byRU].Sample; s != nil && s.RequestChargePercent >= hotShare {
		hot = byRU
	}
	if hot >= 0 {
		r := rep.Ranges[hot]
		text := fmt.Sprintf("hot partition: %s of RU and %s of 429s on range %s", pct(r.Sample.RequestChargePercent), pct(r.Sample.ThrottledPercent), r.ID)
		if rep.Sample.Throttled == 0 {
			text = fmt.Sprintf("hot partition: %s of RU on range %s, and no 429s in the sample", pct(r.Sample.RequestChargePercent), r.ID)
		}
		clause, key := keyClause(r)
		id := r.ID
		return skewVerdict{Kind: skewHotPartition, Text: text + clause, RangeID: &id, PartitionKey: key}
	}
	if rep.Sample.Throttled > 0 {
		text := fmt.Sprintf("evenly loaded: raise throughput (%s spread over %d ranges, at most %s on range %s",
			plural429(rep.Sample.Throttled), n, pct(rep.Ranges[by429].Sample.ThrottledPercent), rep.Ranges[by429].ID)
		if t := rep.Throughput; t.RUPerSecond != nil && *t.RUPerSecond < t.InstantMaxRUPerSecond {
			text += fmt.Sprintf("; %d ranges serve up to %s RU/s without a split", n, progress.Thousands(int64(t.InstantMaxRUPerSecond)))
		}
		return skewVerdict{Kind: skewEvenlyLoaded, Text: text + ")"}
	}
	return skewVerdict{Kind: skewNotThrottled, Text: fmt.Sprintf("not throttled: no 429s in the sample, and no range took %s or more of its RU (at most %s, on range %s)",
		pct(hotShare), pct(rep.Ranges[byRU].Sample.RequestChargePercent), rep.Ranges[byRU].ID)}
}

// storageVerdict judges the ranges' storage, without a sample.
func storageVerdict(rep skewReport) skewVerdict {
	top, reported := -1, false
	for i, r := range rep.Ranges {
		if r.StoragePercent == nil {
			continue
		}
		reported = true
		if top < 0 || *r.StoragePercent > *rep.Ranges[top].StoragePercent {
			top = i
		}
	}
	if !reported {
		return skewVerdict{Kind: skewUnknown, Text: "the service reports no partition statistics; " + skewNoSampleHint}
	}
	r := rep.Ranges[top]
	if *r.StoragePercent == 0 {
		return skewVerdict{Kind: skewStorageEven, Text: "no storage to judge: the ranges report no data; " + skewNoSampleHint}
	}
	if *r.StoragePercent >= skewHotShare(len(rep.Ranges))*100 {
		clause, key := keyClause(r)
		id := r.ID
		return skewVerdict{Kind: skewStorageSkew, RangeID: &id, PartitionKey: key,
			Text: fmt.Sprintf("storage skew: range %s holds %s of the storage%s; %s", r.ID, pct(*r.StoragePercent), clause, skewNoSampleHint)}
	}
	return skewVerdict{Kind: skewStorageEven,
		Text: fmt.Sprintf("storage evenly spread (at most %s, on range %s); %s", pct(*r.StoragePercent), r.ID, skewNoSampleHint)}
}

// keyClause names the keys that weigh on range r: the largest logical partition the
// service lists when it holds a large share of the range's storage, and the sample's
// busiest key when it took most of the range's load. The key returned is the sample's
// when there is one (the load is the evidence), else the storage's.
func keyClause(r skewRange) (string, json.RawMessage) {
	var parts []string
	var key json.RawMessage
	if len(r.LargestPartitionKeys) > 0 {
		k := r.LargestPartitionKeys[0]
		if k.PercentOfRange != nil && *k.PercentOfRange >= skewKeyStorageShare*100 {
			parts = append(parts, fmt.Sprintf("key %s holds %s of its storage", keyText(k.PartitionKey), pct(*k.PercentOfRange)))
			key = k.PartitionKey
		}
	}
	if s := r.Sample; s != nil && s.TopPartitionKey != nil {
		k := s.TopPartitionKey
		var load string
		switch {
		case k.RequestChargePercent >= skewKeyLoadShare*100:
			load = fmt.Sprintf("took %s of its RU in the sample", pct(k.RequestChargePercent))
		case k.ThrottledPercent >= skewKeyLoadShare*100:
			load = fmt.Sprintf("met %s of its 429s in the sample", pct(k.ThrottledPercent))
		}
		switch {
		case load == "":
		case key != nil && compactKey(key) == compactKey(k.PartitionKey):
			// The key the service lists is the busy one: one clause says both.
			parts[0] += " and " + load
		default:
			parts = append(parts, "key "+keyText(k.PartitionKey)+" "+load)
			key = k.PartitionKey
		}
	}
	if len(parts) == 0 {
		return "", nil
	}
	return " (" + strings.Join(parts, "; ") + ")", key
}

// keyText is a partition key as a person reads it: a single string, number, boolean
// or null bare (tenant-42, 42), anything else as compact JSON (["acme","user-7"], and
// [{}] for the none key, as --pk takes them).
func keyText(raw json.RawMessage) string {
	var values []any
	if err := json.Unmarshal(raw, &values); err == nil && len(values) == 1 {
		switch v := values[0].(type) {
		case string:
			return v
		case float64, bool, nil:
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
	return compactKey(raw)
}

func compactKey(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// pct is a percentage as the verdict writes it: "71 %".
func pct(v float64) string { return fmt.Sprintf("%.0f %%", v) }

func plural429(n int64) string {
	if n == 1 {
		return "one 429"
	}
	return progress.Thousands(n) + " 429s"
}
