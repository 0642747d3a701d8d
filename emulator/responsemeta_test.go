package emulator

import (
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestSubstatusIsSentWithErrorsOnly(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	created := c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		status int
	}{
		{"a read", "GET", itemPath("1"), pk, 200},
		{"a 304", "GET", itemPath("1"), merge(pk, map[string]string{cosmos.HeaderIfNoneMatch: created.ETag}), 304},
		{"the account", "GET", "/", nil, 200},
		{"a container", "GET", "/dbs/db/colls/items", nil, 200},
		{"a delete", "DELETE", itemPath("1"), pk, 204},
		{"a 404", "GET", itemPath("1"), pk, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := c.do(s.Endpoint(), tc.method, tc.path, tc.hdr, nil)
			if st, _ := statusOf(t, resp, nil); st != tc.status {
				t.Fatalf("status %d, want %d", st, tc.status)
			}
			sub, has := resp.Header[httpCanonical(cosmos.HeaderSubStatus)]
			if tc.status < 400 && has {
				t.Errorf("a %d carries x-ms-substatus %q", tc.status, sub)
			}
			if tc.status >= 400 && (!has || sub[0] != "0") {
				t.Errorf("a %d carries x-ms-substatus %q, want 0", tc.status, sub)
			}
		})
	}
}

func TestContainerAndItemResponsesCarryQuotaAndUsage(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for _, id := range []string{"1", "2", "3"} {
		c.mustDo(s.Endpoint(), "POST", itemsPath(), pkHeader(`["`+id+`"]`), `{"id":"`+id+`","pk":"`+id+`","pad":"`+strings.Repeat("x", 1000)+`"}`)
	}
	exact := map[string]string{headerPopulateQuotaInfo: "true"}
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
	}{
		{"a container read", "GET", "/dbs/db/colls/items", exact},
		{"an item read", "GET", itemPath("2"), merge(pkHeader(`["2"]`), exact)},
		{"a query", "GET", itemsPath(), exact},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := c.mustDo(s.Endpoint(), tc.method, tc.path, tc.hdr)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			quota := resp.Header.Get(cosmos.HeaderResourceQuota)
			usage := resp.Header.Get(cosmos.HeaderResourceUsage)
			for _, want := range []string{"documentSize=", "documentsSize=", "documentsCount=-1", "collectionSize="} {
				if !strings.Contains(quota, want) {
					t.Errorf("x-ms-resource-quota %q lacks %s", quota, want)
				}
			}
			// Three documents of about 1 KB each: 3 KB, counted exactly when asked.
			if !strings.Contains(usage, ";documentsCount=3;") || !strings.Contains(usage, ";documentsSize=4;") {
				t.Errorf("x-ms-resource-usage %q, want documentsCount=3 and documentsSize=4 (KB)", usage)
			}
			for _, h := range []string{"x-ms-schemaversion", "x-ms-serviceversion", "x-ms-gatewayversion"} {
				if resp.Header.Get(h) == "" {
					t.Errorf("no %s", h)
				}
			}
		})
	}
	// Errors and responses outside containers carry the versions but no quota.
	acct := c.mustDo(s.Endpoint(), "GET", "/", nil)
	missing, _ := c.do(s.Endpoint(), "GET", itemPath("nope"), pkHeader(`["nope"]`), nil)
	for name, resp := range map[string]*cosmos.Response{"the account": acct, "a 404": missing} {
		if q := resp.Header.Get(cosmos.HeaderResourceQuota); q != "" {
			t.Errorf("%s carries x-ms-resource-quota %q", name, q)
		}
		if resp.Header.Get("x-ms-schemaversion") == "" {
			t.Errorf("%s carries no x-ms-schemaversion", name)
		}
	}
}

func TestUsageFollowsWritesWhenAskedForExactCounts(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	exact := map[string]string{headerPopulateQuotaInfo: "true"}
	count := func() string {
		u := c.mustDo(s.Endpoint(), "GET", "/dbs/db/colls/items", exact).Header.Get(cosmos.HeaderResourceUsage)
		_, rest, _ := strings.Cut(u, "documentsCount=")
		n, _, _ := strings.Cut(rest, ";")
		return n
	}
	if n := count(); n != "0" {
		t.Fatalf("empty container documentsCount=%s", n)
	}
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pkHeader(`["a"]`), `{"id":"1","pk":"a"}`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pkHeader(`["b"]`), `{"id":"2","pk":"b"}`)
	if n := count(); n != "2" {
		t.Fatalf("after two creates documentsCount=%s", n)
	}
	c.mustDo(s.Endpoint(), "DELETE", itemPath("1"), pkHeader(`["a"]`))
	if n := count(); n != "1" {
		t.Fatalf("after a delete documentsCount=%s", n)
	}
}
