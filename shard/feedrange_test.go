package shard

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestFeedRangeEncodings(t *testing.T) {
	whole := Interval{Min: "", Max: "FF"}
	if got, want := string(whole.DotNetJSON()), `{"Range":{"min":"","max":"FF"}}`; got != want {
		t.Fatalf("DotNetJSON = %s, want %s", got, want)
	}
	javaJSON := `{"Range":{"min":"","max":"FF","isMinInclusive":true}}`
	if got, want := whole.JavaBase64(), base64.URLEncoding.EncodeToString([]byte(javaJSON)); got != want {
		t.Fatalf("JavaBase64 = %s, want %s (base64url of %s)", got, want, javaJSON)
	}
	for _, iv := range []Interval{whole, {"", "15"}, {"15", "2A"}, {"0CCC", "1999"}, {"3F80", "FF"}, {"0BE05C2DB3B9A0C3470AEFD66C3DEB2A", "0BE05C2DB3B9A0C3470AEFD66C3DEB2B"}} {
		for name, s := range map[string]string{".NET": string(iv.DotNetJSON()), "Java": iv.JavaBase64()} {
			got, err := ParseFeedRange(s)
			if err != nil || got != iv {
				t.Fatalf("%s round trip of %v through %s: %v, %v", name, iv, s, got, err)
			}
		}
	}
}

func TestParseFeedRange(t *testing.T) {
	b64 := func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name, in string
		want     Interval
		err      string
	}{
		{name: ".NET JSON", in: `{"Range":{"min":"","max":"FF"}}`, want: Interval{"", "FF"}},
		{name: ".NET JSON with the default flags spelled out", in: `{"Range":{"min":"10","max":"20","isMinInclusive":true,"isMaxInclusive":false}}`, want: Interval{"10", "20"}},
		{name: "lower-case bounds", in: `{"Range":{"min":"0a","max":"ff"}}`, want: Interval{"0A", "FF"}},
		{name: "Java base64url", in: b64(`{"Range":{"min":"05","max":"3F","isMinInclusive":true}}`), want: Interval{"05", "3F"}},
		{name: "Java base64url without padding", in: strings.TrimRight(b64(`{"Range":{"min":"","max":"2A","isMinInclusive":true}}`), "="), want: Interval{"", "2A"}},
		{name: "standard base64", in: base64.StdEncoding.EncodeToString([]byte(`{"Range":{"min":"","max":"FF"}}`)), want: Interval{"", "FF"}},
		{name: "empty", in: " ", err: "is empty"},
		{name: "not JSON nor base64", in: "0-FF", err: "neither JSON nor base64"},
		{name: "broken JSON", in: `{"Range":`, err: "not a feed range"},
		{name: "a partition key feed range", in: `{"PK":"[\"a\"]"}`, err: "partition key"},
		{name: "a range id feed range", in: `{"PKRangeId":"0"}`, err: "partition key range id"},
		{name: "no Range", in: `{"min":"","max":"FF"}`, err: `no "Range"`},
		{name: "no max", in: `{"Range":{"min":""}}`, err: `both "min" and "max"`},
		{name: "max inclusive", in: `{"Range":{"min":"","max":"FF","isMaxInclusive":true}}`, err: "not a [min, max) range"},
		{name: "min exclusive", in: b64(`{"Range":{"min":"","max":"FF","isMinInclusive":false}}`), err: "not a [min, max) range"},
		{name: "not hex", in: `{"Range":{"min":"","max":"ZZ"}}`, err: "not hex"},
		{name: "empty range", in: `{"Range":{"min":"20","max":"20"}}`, err: "is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseFeedRange(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ParseFeedRange(%s) = %v, %v; want one line with %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseFeedRange(%s) = %v, %v; want %v", c.in, got, err, c.want)
			}
		})
	}
}
