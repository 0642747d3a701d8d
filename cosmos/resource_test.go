package cosmos

import "testing"

func TestResourceFromPath(t *testing.T) {
	cases := []struct{ path, typ, link string }{
		{"/", "", ""},
		{"", "", ""},
		{"/dbs", "dbs", ""},
		{"/dbs/ToDoList", "dbs", "dbs/ToDoList"},
		{"/dbs/db/colls", "colls", "dbs/db"},
		{"/dbs/db/colls/c", "colls", "dbs/db/colls/c"},
		{"/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c"},
		{"/dbs/db/colls/c/docs/My%20Item", "docs", "dbs/db/colls/c/docs/My Item"},
		{"/dbs/db/colls/c/docs/a+b", "docs", "dbs/db/colls/c/docs/a+b"},
		{"/dbs/db/colls/c/docs/a%2541", "docs", "dbs/db/colls/c/docs/a%41"},
		{"/dbs/db/colls/c/docs/a%252Fb", "docs", "dbs/db/colls/c/docs/a%2Fb"},
		{"/dbs/db/colls/c/pkranges", "pkranges", "dbs/db/colls/c"},
		{"/dbs/DB/colls/Case", "colls", "dbs/DB/colls/Case"},
	}
	for _, tc := range cases {
		typ, link := ResourceFromPath(tc.path)
		if typ != tc.typ || link != tc.link {
			t.Errorf("%q → (%q, %q), want (%q, %q)", tc.path, typ, link, tc.typ, tc.link)
		}
	}
}

// FuzzPlainResourceIsTheSegmentsAnswer: the allocation-free path gives, wherever it
// answers, what splitting and decoding the segments gives.
func FuzzPlainResourceIsTheSegmentsAnswer(f *testing.F) {
	for _, p := range []string{"/", "", "dbs", "/dbs/", "/dbs/db/colls/c/docs/x", "dbs/db/colls/c/docs/", "/a/b/c/", "//a", "/a%20b"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		typ, link, ok := plainResource(path)
		if !ok {
			return
		}
		wantTyp, wantLink := ResourceFromSegments(PathSegments(path))
		if typ != wantTyp || link != wantLink {
			t.Fatalf("%q → (%q, %q), splitting gives (%q, %q)", path, typ, link, wantTyp, wantLink)
		}
	})
}

func TestItemPathEscapesAndRoundTrips(t *testing.T) {
	p := ItemPath("db", "c", "order #7 ü")
	if typ, link := ResourceFromPath(p); typ != "docs" || link != "dbs/db/colls/c/docs/order #7 ü" {
		t.Fatalf("%s → %s %s", p, typ, link)
	}
}

func TestRegionNamesCompareLooselyAsTheServiceDoes(t *testing.T) {
	for _, pair := range [][2]string{{"East US", "eastus"}, {"EAST US", "East Us"}, {"West Europe", " west  europe "}} {
		if !SameRegion(pair[0], pair[1]) {
			t.Errorf("%q and %q must be the same region", pair[0], pair[1])
		}
	}
	if SameRegion("East US", "East US 2") {
		t.Error("East US and East US 2 are different regions")
	}
}
