package query

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// A continuation token is cosmosctl's own, not the service's: "cq1." and the
// base64url of the JSON of a token (deflated when long). It holds, for every range not yet
// finished, the service continuation to go on from (and, for ORDER BY, what of that
// page was already returned), what the client-side stages hold (items skipped and
// returned for OFFSET, LIMIT and TOP, DISTINCT's last or seen values, the aggregates and
// groups so far), and a fingerprint of the query, so that a token is refused for any
// other query, container or partition key.
const tokenPrefix = "cq1."

// maxTokenBytes bounds a token. One command-line argument holds at most 128 KiB on
// Linux; a GROUP BY with very many groups, or a DISTINCT with very many values, outgrows
// that, and its run cannot be resumed (Iterator.Unresumable says so).
const maxTokenBytes = 96 << 10

type token struct {
	Version     int    `json:"v"`
	Fingerprint string `json:"fp"`
	Mode        string `json:"m"`
	// Ranges are the ranges not yet finished, in key order.
	Ranges []rangeToken `json:"r,omitempty"`
	// Skipped counts OFFSET's items skipped, Emitted the items taken after it (TOP and
	// LIMIT count them).
	Skipped int `json:"s,omitempty"`
	Emitted int `json:"e,omitempty"`
	// LastHash is ordered DISTINCT's last value; Seen unordered DISTINCT's values.
	LastHash string   `json:"dh,omitempty"`
	Seen     []string `json:"ds,omitempty"`
	// Groups are the aggregates and groups so far, Out how many of their results were
	// returned once every range was drained.
	Groups  []*group `json:"g,omitempty"`
	Drained bool     `json:"d,omitempty"`
	Out     int      `json:"o,omitempty"`
}

type rangeToken struct {
	epkRange
	// C is the service continuation of the page to read next ("" from the start).
	C string `json:"c,omitempty"`
	// Last and Ties (ORDER BY): the orderByItems of the last item returned from the
	// page at C, and the identities (_rid) of the items with those values returned from
	// it. On resume, items before Last, and Last's ties, are skipped.
	Last json.RawMessage `json:"l,omitempty"`
	Ties []string        `json:"t,omitempty"`
}

var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestCompression)
	return w
}}

var errTokenMismatch = errors.New("the continuation token does not fit this query")

func encodeToken(t *token) (string, error) {
	t.Version = 1
	js, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	// 'j' + JSON; 'z' + deflated JSON when that is worth it (many ranges, groups or
	// DISTINCT values).
	payload := append([]byte{'j'}, js...)
	if len(js) > 1024 {
		var b bytes.Buffer
		b.WriteByte('z')
		w := flateWriters.Get().(*flate.Writer)
		w.Reset(&b)
		w.Write(js)
		w.Close()
		flateWriters.Put(w)
		payload = b.Bytes()
	}
	s := tokenPrefix + base64.RawURLEncoding.EncodeToString(payload)
	if len(s) > maxTokenBytes {
		return "", fmt.Errorf("the query's state (%d bytes as a token) is too large to resume from", len(s))
	}
	return s, nil
}

// decodeToken reads a token and checks it was issued for the query with fingerprint fp.
func decodeToken(s, fp string) (*token, error) {
	bad := inputErrorf("the continuation token is not one cosmosctl issued (or it was cut short): copy it whole, or run the query without --continuation")
	if !strings.HasPrefix(s, tokenPrefix) {
		return nil, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, tokenPrefix))
	if err != nil || len(raw) == 0 {
		return nil, bad
	}
	js := raw[1:]
	switch raw[0] {
	case 'j':
	case 'z':
		if js, err = io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw[1:])), 8<<20)); err != nil {
			return nil, bad
		}
	default:
		return nil, bad
	}
	var t token
	if err := json.Unmarshal(js, &t); err != nil || t.Version != 1 {
		return nil, bad
	}
	if t.Fingerprint != fp {
		return nil, inputErrorf("the continuation token was issued for another query (or container, or partition key): resume with the same query, parameters and --pk, or run it without --continuation")
	}
	return &t, nil
}

// fingerprint identifies a query for its tokens: the container, the query text, its
// parameters (values compared canonically) and the partition key or prefix.
func fingerprint(o *Options) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q\n%q\n%q\n", o.Database, o.Container, o.Spec.Query)
	for _, p := range o.Spec.Parameters {
		c, err := canonical(p.Value)
		if err != nil {
			c = p.Value
		}
		fmt.Fprintf(h, "%q=%s\n", p.Name, c)
	}
	if o.PartitionKey != nil {
		fmt.Fprintf(h, "pk=%s\n", o.PartitionKey.JSON())
	}
	if o.PartitionKeyPrefix != nil {
		fmt.Fprintf(h, "prefix=%s\n", o.PartitionKeyPrefix.JSON())
	}
	if r := o.FeedRange; r != nil {
		fmt.Fprintf(h, "feedrange=%s,%s\n", strings.ToUpper(r.Min), strings.ToUpper(r.Max))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
