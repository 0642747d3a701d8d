package jsondoc

import "testing"

func TestQueryNamesTheCollectionThenTheAlias(t *testing.T) {
	doc, err := ParseObject([]byte(`{"id":"db1"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"SELECT * FROM root r WHERE r.id = 'db1'",
		"SELECT * FROM root AS r WHERE r.id = 'db1'",
		"SELECT * FROM c WHERE c.id = 'db1'",
	} {
		q, err := ParseQuery(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		ok, err := q.Where.Match(doc, nil)
		if err != nil || !ok {
			t.Errorf("%s: match %v, %v", sql, ok, err)
		}
	}
	if _, err := ParseQuery("SELECT * FROM root r WHERE root.id = 'db1'"); err == nil {
		t.Error("the collection name is not the alias once an alias is given")
	}
}
