package querycorpus_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"time"
)

// The corpus's documents: a fixed generator (math/rand with a fixed seed, whose
// sequence Go keeps stable), so every run, and the JavaScript SDK's, sees the same data.
const (
	docCount = 240
	pkCount  = 24
)

// doc is one generated document as encoding/json decodes it (numbers float64).
type doc = map[string]any

var (
	// words are s's values: ASCII in both cases, accents, CJK, full-width letters
	// (U+FF21…), astral characters (U+1F600, U+1D11E: two UTF-16 code units each), the
	// LIKE wildcards % and _, a backslash, and the empty string.
	words = []string{"apple", "Apple", "banana", "cherry", "ünïcode", "日本語", "Ｆｕｌｌ", "😀smile", "𝄞music",
		"zebra", "mañana", "abc_def", "50%off", `a\b`, "", "Zulu", "éclair", "a😀b", "100%", "under_score"}
	cats   = []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	colors = []string{"red", "green", "blue"}
	tagSet = []string{"red", "blue", "green", "new", "sale", "x"}
	cities = []string{"Oslo", "Lima", "Zürich", "東京", "Austin", "Lagos"}
	goods  = []string{"pen", "cup", "lamp", "book"}
)

// pkOf is the partition key of document i: pkCount keys over the container's ranges.
func pkOf(i int) string { return fmt.Sprintf("p%02d", i%pkCount) }

// genDocs makes the documents: nested objects (addr, addr.geo, meta.level), arrays of
// scalars (tags) and of objects (items), properties that are sometimes missing or null,
// a property of every JSON type (k), numbers negative and fractional, strings with
// non-BMP characters, and dates as ISO 8601 strings in the service's format
// (YYYY-MM-DDThh:mm:ss.fffffffZ).
func genDocs() []doc {
	r := rand.New(rand.NewSource(24))
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	docs := make([]doc, docCount)
	for i := range docs {
		d := doc{
			"id":   fmt.Sprintf("d%03d", i),
			"pk":   pkOf(i),
			"n":    float64(r.Intn(41) - 10),
			"cat":  cats[r.Intn(len(cats))],
			"flag": r.Intn(2) == 0,
		}
		if r.Intn(100) < 85 {
			d["x"] = float64(r.Intn(10001)-5000) / 100
		}
		if r.Intn(100) < 90 {
			d["s"] = words[r.Intn(len(words))]
		}
		switch c := r.Intn(100); {
		case c < 80:
			d["color"] = colors[r.Intn(len(colors))]
		case c < 90:
			d["color"] = nil
		}
		switch r.Intn(10) {
		case 0: // missing
		case 1:
			d["k"] = nil
		case 2:
			d["k"] = false
		case 3:
			d["k"] = true
		case 4:
			d["k"] = float64(r.Intn(21) - 10)
		case 5:
			d["k"] = float64(r.Intn(2001)-1000) / 8
		case 6:
			d["k"] = words[r.Intn(len(words))]
		case 7:
			d["k"] = []any{float64(r.Intn(5)), "a"}
		case 8:
			d["k"] = map[string]any{"a": float64(r.Intn(5))}
		case 9:
			d["k"] = "k" + fmt.Sprint(r.Intn(9))
		}
		if r.Intn(10) > 0 {
			tags := []any{}
			for j, n := 0, r.Intn(5); j < n; j++ {
				tags = append(tags, tagSet[r.Intn(len(tagSet))])
			}
			d["tags"] = tags
		}
		if r.Intn(10) > 0 {
			items := []any{}
			for j, n := 0, r.Intn(4); j < n; j++ {
				it := map[string]any{"name": goods[r.Intn(len(goods))], "qty": float64(r.Intn(6))}
				if r.Intn(5) > 0 {
					it["price"] = float64(r.Intn(2000)) / 4
				}
				items = append(items, it)
			}
			d["items"] = items
		}
		if r.Intn(10) > 0 {
			addr := map[string]any{"zip": fmt.Sprintf("%05d", r.Intn(100000)),
				"geo": map[string]any{"lat": float64(r.Intn(18001)-9000) / 100, "lon": float64(r.Intn(36001)-18000) / 100}}
			if r.Intn(6) > 0 {
				addr["city"] = cities[r.Intn(len(cities))]
			}
			d["addr"] = addr
		}
		if r.Intn(10) > 0 {
			// Days 1 to 28 of a month, so that adding months never meets a short month.
			t := base.AddDate(r.Intn(6), r.Intn(12), r.Intn(28)).Add(time.Duration(r.Intn(86400)) * time.Second).Add(time.Duration(r.Intn(10000000)) * 100)
			d["when"] = t.Format("2006-01-02T15:04:05.0000000Z")
		}
		switch r.Intn(10) {
		case 0, 1, 2:
		case 3, 4, 5:
			d["opt"] = nil
		default:
			d["opt"] = float64(r.Intn(100))
		}
		if r.Intn(3) == 0 {
			d["meta"] = map[string]any{"level": map[string]any{"deep": float64(r.Intn(7))}, "note": words[r.Intn(len(words))]}
		}
		// Round-trip through JSON: what the oracle sees is exactly what is stored.
		b, _ := json.Marshal(d)
		var back doc
		if err := json.Unmarshal(b, &back); err != nil {
			panic(err)
		}
		docs[i] = back
	}
	return docs
}
