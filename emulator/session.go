package emulator

import (
	"strconv"
	"strings"
	"time"
)

// sessionTokenVersion is the version field of the tokens the emulator sends. The
// service bumps a partition's version on a topology change (failover, split); the
// emulator's never changes. It differs from the -1 of the simple tokens the handlers
// write first, so that an SDK merging the two never compares region lists of equal
// versions (the Python and JS SDKs fail a merge of equal versions with different
// region sets).
const sessionTokenVersion = "1"

// sessionToken renders a token for one partition key range in the simple shape,
// "<range>:-1#<lsn>". The response helpers turn it into the multi-region shape
// (vectorSessionToken) before it is sent.
func sessionToken(rangeID string, lsn int64) string {
	return rangeID + ":-1#" + strconv.FormatInt(lsn, 10)
}

// vectorSessionToken renders a token in the multi-region shape the service sends,
// "<range>:<version>#<globalLSN>#<regionId>=<lsn>#…": after the global LSN, each region
// of the account (its index as the id, every region always, so that clients merging
// tokens see the same set) with the LSN up to which the answering region has applied
// that region's writes. No progress is above the global LSN; under replication lag a
// region whose writes have not all arrived shows less.
func vectorSessionToken(rangeID string, global int64, progress []int64) string {
	b := make([]byte, 0, len(rangeID)+24+len(progress)*12)
	b = append(b, rangeID...)
	b = append(b, ':')
	b = append(b, sessionTokenVersion...)
	b = append(b, '#')
	b = strconv.AppendInt(b, global, 10)
	for i, lsn := range progress {
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '=')
		b = strconv.AppendInt(b, min(lsn, global), 10)
	}
	return string(b)
}

// regionProgress is, for each of n regions, the LSN up to which region has applied that
// region's writes to p: everything, unless some of its commits are still in flight.
func regionProgress(p *partition, region, n int, now time.Time, lag time.Duration) []int64 {
	out := make([]int64, n)
	p.mu.RLock()
	defer p.mu.RUnlock()
	for i := range out {
		out[i] = p.lsn
	}
	if lag <= 0 {
		return out
	}
	for _, c := range p.commits {
		if c.origin != region && c.origin >= 0 && c.origin < n && c.committed.Add(lag).After(now) && c.lsn-1 < out[c.origin] {
			out[c.origin] = c.lsn - 1
		}
	}
	return out
}

// parseSessionToken splits one "<range>:<version>#<lsn>[#<region>=<lsn>…]" token (the
// range prefix optional). ok is false when it is not a token.
func parseSessionToken(tok string) (rangeID string, global int64, ok bool) {
	rng, rest, hasRange := strings.Cut(tok, ":")
	if !hasRange {
		rest, rng = tok, ""
	}
	_, after, found := strings.Cut(rest, "#")
	if !found {
		return "", 0, false
	}
	lsnText, _, _ := strings.Cut(after, "#")
	n, err := strconv.ParseInt(lsnText, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return rng, n, true
}

// sessionLSN finds the LSN a client's session token demands for a range. Clients send
// one token per range they have seen, comma-separated, in the simple shape
// ("0:-1#12") or the multi-region one ("0:1#12#0=12#1=9"); the global LSN is what
// counts. A token without a range prefix applies to any range. ok is false when the
// client demands nothing of this range.
func sessionLSN(header, rangeID string) (lsn int64, ok bool) {
	for _, tok := range strings.Split(header, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		rng, n, valid := parseSessionToken(tok)
		if !valid || (rng != "" && rng != rangeID) {
			continue
		}
		if n > lsn {
			lsn = n
		}
		ok = true
	}
	return lsn, ok
}
