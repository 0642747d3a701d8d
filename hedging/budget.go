package hedging

import "math"

// tokenUnits is one token in the bucket's fixed-point units. Counting in billionths of
// a token keeps the arithmetic exact for budgets written with up to nine decimals: ten
// operations at a 0.1 budget earn exactly one token, where float64 would sum them to
// 0.9999999999999999 and refuse the hedge they paid for.
const tokenUnits = 1_000_000_000

// maxBurst bounds the bucket so that its capacity in units fits an int64 with room to
// spare; a larger burst would not be a budget anyway.
const maxBurst = 1_000_000

// bucket is the hedge budget: a token bucket filled by traffic, not by time. Every
// operation earns Budget tokens, up to Burst; every hedge arm costs one. Over n
// operations the extra requests are therefore at most Budget×n + Burst, however the
// operations are spread in time, and a quiet client does not save up a storm.
type bucket struct {
	units int64 // tokens × tokenUnits
	earn  int64 // per operation
	burst int64 // capacity
}

// newBucket returns a full bucket: a client's first slow requests may hedge at once.
func newBucket(budget, burst float64) bucket {
	b := bucket{earn: int64(math.Round(budget * tokenUnits)), burst: int64(math.Round(burst * tokenUnits))}
	b.units = b.burst
	return b
}

// operation credits one operation's share.
func (b *bucket) operation() { b.units = min(b.burst, b.units+b.earn) }

// take pays for one hedge arm if a whole token is there.
func (b *bucket) take() bool {
	if b.units < tokenUnits {
		return false
	}
	b.units -= tokenUnits
	return true
}

func (b *bucket) tokens() float64 { return float64(b.units) / tokenUnits }
