package jsondoc

import (
	"strings"
	"testing"
)

// valueOf evaluates expr once (SELECT VALUE expr over one document {"id":"1"}) and
// returns its JSON, or "undefined" when the query returns no row.
func valueOf(t *testing.T, expr string) string {
	t.Helper()
	got := runQuery(t, "SELECT VALUE "+expr+" FROM c", nil, []string{`{"id":"1"}`})
	if got == "[]" {
		return "undefined"
	}
	return strings.TrimSuffix(strings.TrimPrefix(got, "["), "]")
}

// The wildcards and the ESCAPE clause of Learn's LIKE page
// (https://learn.microsoft.com/cosmos-db/query/like), its examples first.
func TestLikeFollowsTheDocumentedWildcards(t *testing.T) {
	tests := []struct {
		s, pattern, escape string
		want               string
	}{
		{"a screwdriver set", "%driver%", "", "true"},
		{"fruit basket", "fruit%", "", "true"},
		{"a basket of fruit", "fruit%", "", "false"},
		{"Touring Road", "%Road", "", "true"},
		{"Road bike", "%Road", "", "false"},
		{"ISO PS", "%SO%PS%", "", "true"},
		{"xSOaPSy", "%SO_PS%", "", "true"},
		{"xSOPSy", "%SO_PS%", "", "false"},
		{"SOuPS", "%SO[t-z]PS%", "", "true"},
		{"SOsPS", "%SO[t-z]PS%", "", "false"},
		{"SOdPS", "%SO[^abc]PS%", "", "true"},
		{"SObPS", "%SO[^abc]PS%", "", "false"},
		{"a 20% discount", "%20^%%", "^", "true"},
		{"a 200 discount", "%20^%%", "^", "false"},
		{"20-30%", "20-30[%]", "", "true"},
		{"20-300", "20-30[%]", "", "false"},
		{"_n", "[_]n", "", "true"},
		{"an", "[_]n", "", "false"},
		{"[", "[[]", "", "true"},
		{"]", "]", "", "true"},
		// The match is case-sensitive and covers the whole string.
		{"Fruit", "fruit%", "", "false"},
		{"xfruit", "fruit", "", "false"},
		{"", "%", "", "true"},
		{"", "_", "", "false"},
		{"abc", "a%%c", "", "true"},
		{"aXbXc", "a%b%c", "", "true"},
		{"abcbd", "%b_", "", "true"},
		// An unclosed bracket is literal; an escape character escapes the next
		// wildcard or bracket.
		{"[ab", "[ab", "", "true"},
		{"a[b]", "a![b]", "!", "true"},
		{"a_c", "a!_c", "!", "true"},
		{"abc", "a!_c", "!", "false"},
		// UTF-16 code units: _ is half of a character outside the BMP.
		{"😀", "_", "", "false"},
		{"😀", "__", "", "true"},
		{"😀smile", "%smile", "", "true"},
	}
	for _, tt := range tests {
		q := "(" + sqlString(tt.s) + " LIKE " + sqlString(tt.pattern)
		if tt.escape != "" {
			q += " ESCAPE " + sqlString(tt.escape)
		}
		q += ")"
		if got := valueOf(t, q); got != tt.want {
			t.Errorf("%s = %s, want %s", q, got, tt.want)
		}
		not := strings.Replace(q, " LIKE ", " NOT LIKE ", 1)
		if want := map[string]string{"true": "false", "false": "true"}[tt.want]; valueOf(t, not) != want {
			t.Errorf("%s = %s, want %s", not, valueOf(t, not), want)
		}
	}
}

func sqlString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestLikeFiltersDocumentsAndParameters(t *testing.T) {
	docs := []string{
		`{"id":"1","name":"fruit salad","d":"20% off"}`,
		`{"id":"2","name":"Fruit bowl","d":"20 off"}`,
		`{"id":"3","name":42}`,
		`{"id":"4"}`,
	}
	for _, tt := range []struct {
		sql  string
		p    map[string]*Value
		want string
	}{
		{"SELECT VALUE c.id FROM c WHERE c.name LIKE 'fruit%'", nil, `["1"]`},
		// Non-strings and undefined are neither LIKE nor NOT LIKE.
		{"SELECT VALUE c.id FROM c WHERE c.name NOT LIKE 'fruit%'", nil, `["2"]`},
		{"SELECT VALUE c.id FROM c WHERE NOT (c.name LIKE 'fruit%')", nil, `["2"]`},
		{"SELECT VALUE c.id FROM c WHERE c.name LIKE @p", map[string]*Value{"@p": String("%bowl")}, `["2"]`},
		{"SELECT VALUE c.id FROM c WHERE c.d LIKE '%0\\\\%%' ESCAPE '\\\\'", nil, `["1"]`},
		{"SELECT VALUE c.id FROM c WHERE c.d LIKE @p ESCAPE @e", map[string]*Value{"@p": String("20#%%"), "@e": String("#")}, `["1"]`},
		// An ESCAPE parameter of two characters makes LIKE undefined: nothing matches.
		{"SELECT VALUE c.id FROM c WHERE c.d LIKE @p ESCAPE @e", map[string]*Value{"@p": String("%"), "@e": String("##")}, `[]`},
		{"SELECT c.id, c.name LIKE '%s%' AS s FROM c WHERE c.id IN ('1', '3')", nil, `[{"id":"1","s":true},{"id":"3"}]`},
		{"SELECT VALUE c.id FROM c WHERE c.name LIKE 'f' || 'ruit%' AND c.id = '1'", nil, `["1"]`},
	} {
		if got := runQuery(t, tt.sql, tt.p, docs); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.sql, got, tt.want)
		}
	}
}

func TestLikeRendersAndRefusesABadEscape(t *testing.T) {
	q, err := ParseQuery("SELECT * FROM c WHERE c.a NOT LIKE 'x%' ESCAPE '!' AND c.b LIKE 'y'")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := q.String(), `SELECT * FROM c WHERE (NOT (c.a LIKE "x%" ESCAPE "!")) AND (c.b LIKE "y")`; got != want {
		t.Errorf("rendered %s, want %s", got, want)
	}
	for _, sql := range []string{
		"SELECT * FROM c WHERE c.a LIKE 'x' ESCAPE 'ab'",
		"SELECT * FROM c WHERE c.a LIKE 'x' ESCAPE ''",
		"SELECT * FROM c WHERE c.a LIKE 'x' ESCAPE 1",
	} {
		_, err := ParseQuery(sql)
		if err == nil || !strings.Contains(err.Error(), "ESCAPE takes a string of one character") {
			t.Errorf("%s: %v, want the one-character ESCAPE error", sql, err)
		}
	}
	if _, err := ParseQuery("SELECT * FROM c WHERE c.a LIKE"); err == nil || !strings.Contains(err.Error(), "unexpected end of query") {
		t.Errorf("LIKE without a pattern: %v", err)
	}
}
