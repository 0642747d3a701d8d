package cosmos

import "strings"

// EPKRange is the effective partition keys [Min, Max), upper-case hex: Min "" is the
// lowest key, Max "FF" lies above the highest (every key's first byte is masked below
// 0x40).
type EPKRange struct {
	Min string `json:"min"`
	Max string `json:"max"`
}

// IsPrefix reports whether pk is a prefix of the keys of a container with definition d:
// the first values of a hierarchical (MultiHash) key, fewer than its paths. The none
// key [{}] is a whole key on any container (the emulator and the service take it in the
// partition key header whatever the paths), and a key with as many values as paths is
// a whole key; a key with more is neither (check TooLong first).
func (d PartitionKeyDefinition) IsPrefix(pk PartitionKey) bool {
	return len(pk) > 0 && len(pk) < len(d.Paths) && !pk.Equal(NonePK)
}

// TooLong reports whether pk has more values than the container has paths: no key of
// the container, nor a prefix of one.
func (d PartitionKeyDefinition) TooLong(pk PartitionKey) bool {
	return len(pk) > len(d.Paths) && !pk.Equal(NonePK)
}

// PrefixRange is the effective partition keys of every key that starts with prefix,
// the first values of a hierarchical key: from the prefix's own effective partition key
// (its values' hashes, concatenated) to that followed by "FF". A key's effective
// partition key is its values' hashes concatenated, each 32 hex digits below "40", so
// the keys that start with the prefix are exactly those in the range. The JS SDK
// computes the same range for a prefix (@azure/cosmos 4.10.1,
// client/ChangeFeed/changeFeedUtils.js getEPKRangeForPrefixPartitionKey: minEPK is the
// joined hashV2PartitionKey of each value, maxEPK minEPK + "FF").
func PrefixRange(prefix PartitionKey) EPKRange {
	epk := EffectivePartitionKey(prefix)
	return EPKRange{Min: epk, Max: epk + "FF"}
}

// Overlaps reports whether the partition key range pr holds any key of r.
func (r EPKRange) Overlaps(pr PartitionKeyRange) bool {
	return compareEPK(pr.MinInclusive, r.Max) < 0 && compareEPK(r.Min, pr.MaxExclusive) < 0
}

// Overlapping are the ranges, of those given and in their order, that hold any key of r.
func (r EPKRange) Overlapping(ranges []PartitionKeyRange) []PartitionKeyRange {
	var out []PartitionKeyRange
	for _, pr := range ranges {
		if r.Overlaps(pr) {
			out = append(out, pr)
		}
	}
	return out
}

// Within is the part of r that the partition key range pr holds, and whether that is
// less than all of pr: a request to pr for r's keys is then narrowed to the part
// (x-ms-start-epk, x-ms-end-epk), as the JS SDK narrows a feed range to each range it
// overlaps (changeFeedUtils.js extractOverlappingRanges: no narrowing when the range
// lies inside the feed range, the overlap otherwise). A request for a span reaching
// beyond its range is not one the service serves: the .NET SDK intersects a prefix's
// range with each physical partition's because "such an epk range does not exist at
// the container level, Service generates a GoneException"
// (azure-cosmos-dotnet-v3, Query/Core/Pipeline/CrossPartition/HierarchicalPartitionUtils.cs).
func (r EPKRange) Within(pr PartitionKeyRange) (part EPKRange, narrowed bool) {
	part = EPKRange{Min: pr.MinInclusive, Max: pr.MaxExclusive}
	if compareEPK(r.Min, part.Min) > 0 {
		part.Min, narrowed = r.Min, true
	}
	if compareEPK(r.Max, part.Max) < 0 {
		part.Max, narrowed = r.Max, true
	}
	return part, narrowed
}

// Contains reports whether o lies inside r.
func (r EPKRange) Contains(o EPKRange) bool {
	return compareEPK(r.Min, o.Min) <= 0 && compareEPK(o.Max, r.Max) <= 0
}

// compareEPK compares effective partition keys: the service writes them upper-case, a
// query plan or a hand-edited state may not.
func compareEPK(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) }
