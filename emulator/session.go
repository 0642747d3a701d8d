package emulator

import (
	"strconv"
	"strings"
)

// sessionToken renders a token for one partition key range: "<range>:-1#<lsn>". The
// middle field is the range's version, which the emulator never changes.
func sessionToken(rangeID string, lsn int64) string {
	return rangeID + ":-1#" + strconv.FormatInt(lsn, 10)
}

// sessionLSN finds the LSN a client's session token demands for a range. Clients send
// one token per range they have seen, comma-separated; a token without a range prefix
// applies to any range. ok is false when the client demands nothing of this range.
func sessionLSN(header, rangeID string) (lsn int64, ok bool) {
	for _, tok := range strings.Split(header, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		rng, rest, hasRange := strings.Cut(tok, ":")
		if !hasRange {
			rest, rng = tok, ""
		}
		if rng != "" && rng != rangeID {
			continue
		}
		// rest is "<version>#<lsn>" optionally followed by "#<region>=<lsn>" vectors.
		parts := strings.Split(rest, "#")
		if len(parts) < 2 {
			continue
		}
		n, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			continue
		}
		if n > lsn {
			lsn = n
		}
		ok = true
	}
	return lsn, ok
}
