package jsondoc

import (
	"math/rand"
	"slices"
	"testing"
	"unicode/utf16"
)

// utf16Pieces mix the characters whose UTF-16 order differs from their code
// point order: astral ones (surrogate pairs) against U+E000–U+FFFF.
var utf16Pieces = []string{"a", "Z", "é", "中", "\uD7FF", "\uE000", "ｚ", "Ａ", "\uFFFD", "😀", "𝄞", "\U0010FFFF", ""}

func randomUTF16String(rng *rand.Rand) string {
	s := ""
	for n := rng.Intn(4); n > 0; n-- {
		s += utf16Pieces[rng.Intn(len(utf16Pieces))]
	}
	return s
}

// Strings sort by UTF-16 code unit, as the SDKs merge them: an astral
// character (a surrogate pair) sorts before a full-width one, though its code
// point is higher. Checked against Go's own UTF-16 encoding over random
// strings.
func TestStringsOrderByUTF16CodeUnits(t *testing.T) {
	if c := compareUTF16("😀", "ｚ"); c >= 0 {
		t.Fatalf(`"😀" (U+1F600, D83D DE00) must sort before "ｚ" (U+FF5A): compare = %d`, c)
	}
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 20000; i++ {
		a, b := randomUTF16String(rng), randomUTF16String(rng)
		want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		if got := CompareOrder(&Value{Kind: KindString, Str: a}, &Value{Kind: KindString, Str: b}); sign(got) != want {
			t.Fatalf("CompareOrder(%+q, %+q) = %d, want %d", a, b, got, want)
		}
		ka, kb := makeOrderKey(&Value{Kind: KindString, Str: a}), makeOrderKey(&Value{Kind: KindString, Str: b})
		if got := compareOrderKeys(&ka, &kb); sign(got) != want {
			t.Fatalf("compareOrderKeys(%+q, %+q) = %d, want %d", a, b, got, want)
		}
	}
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// ORDER BY, MIN and MAX and the comparison operators follow the same order.
func TestOrderByMinMaxAndComparisonsUseUTF16Order(t *testing.T) {
	docs := []string{`{"id":"1","s":"ｚ"}`, `{"id":"2","s":"😀"}`, `{"id":"3","s":"a"}`, `{"id":"4","s":"\uE000"}`}
	for _, c := range []struct{ sql, want string }{
		{"SELECT VALUE c.s FROM c ORDER BY c.s", "[\"a\",\"😀\",\"\ue000\",\"ｚ\"]"},
		{"SELECT VALUE c.s FROM c ORDER BY c.s DESC", "[\"ｚ\",\"\ue000\",\"😀\",\"a\"]"},
		{"SELECT VALUE MAX(c.s) FROM c", `["ｚ"]`},
		{"SELECT VALUE MIN(c.s) FROM c WHERE c.s > 'a'", `["😀"]`},
		{"SELECT VALUE c.id FROM c WHERE c.s < '\uE000' ORDER BY c.id", `["2","3"]`},
	} {
		if got := runQuery(t, c.sql, nil, docs); got != c.want {
			t.Errorf("%s = %+q, want %+q", c.sql, got, c.want)
		}
	}
}

// Arrays tie with arrays and objects with objects (the service's order among
// them is a hash no document describes); ties keep their creation order.
func TestArraysAndObjectsTieAmongThemselves(t *testing.T) {
	docs := []string{`{"id":"1","v":[2]}`, `{"id":"2","v":{"b":1}}`, `{"id":"3","v":[1]}`, `{"id":"4","v":{"a":1}}`, `{"id":"5","v":"s"}`}
	for _, c := range []struct{ sql, want string }{
		{"SELECT VALUE c.id FROM c ORDER BY c.v", `["5","1","3","2","4"]`},
		{"SELECT VALUE c.id FROM c ORDER BY c.v DESC", `["4","2","3","1","5"]`},
	} {
		if got := runQuery(t, c.sql, nil, docs); got != c.want {
			t.Errorf("%s = %+q, want %+q", c.sql, got, c.want)
		}
	}
}
