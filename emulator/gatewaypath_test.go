package emulator

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

func TestGatewaySegments(t *testing.T) {
	cases := []struct {
		name    string
		escaped string
		want    []string // nil with ok false: http.sys refuses the URL
	}{
		{"a plain id", "/dbs/db/colls/c/docs/Test", []string{"dbs", "db", "colls", "c", "docs", "Test"}},
		{"spaces inside and in front are kept", "/dbs/db/colls/c/docs/%20This%20is", []string{"dbs", "db", "colls", "c", "docs", " This is"}},
		{"trailing spaces are cut", "/dbs/db/colls/c/docs/Test%20%20", []string{"dbs", "db", "colls", "c", "docs", "Test"}},
		{"unicode sent escaped once is the id", "/dbs/db/colls/c/docs/WithUnicode%E9%B1%80", []string{"dbs", "db", "colls", "c", "docs", "WithUnicode鱀"}},
		{"a question mark sent escaped stays in the id", "/dbs/db/colls/c/docs/Disallowed%3FChars", []string{"dbs", "db", "colls", "c", "docs", "Disallowed?Chars"}},
		{"an escaped slash separates segments", "/dbs/db/colls/c/docs/Disallowed%2FChars", []string{"dbs", "db", "colls", "c", "docs", "Disallowed", "Chars"}},
		{"a backslash is a slash", "/dbs/db/colls/c/docs/Disallowed%5CChars", []string{"dbs", "db", "colls", "c", "docs", "Disallowed", "Chars"}},
		{"a hash starts a fragment", "/dbs/db/colls/c/docs/Disallowed%23Chars", []string{"dbs", "db", "colls", "c", "docs", "Disallowed"}},
		{"a percent escape in the id is decoded a second time", "/dbs/db/colls/c/docs/Id%2520", []string{"dbs", "db", "colls", "c", "docs", "Id "}},
		{"an escaped escaped unicode becomes the character", "/dbs/db/colls/c/docs/X%25E9%25B1%2580", []string{"dbs", "db", "colls", "c", "docs", "X鱀"}},
		{"a percent that begins no escape survives", "/dbs/db/colls/c/docs/100%25", []string{"dbs", "db", "colls", "c", "docs", "100%"}},
		{"a plus stays a plus", "/dbs/db/colls/c/docs/a+b", []string{"dbs", "db", "colls", "c", "docs", "a+b"}},
		{"a carriage return is refused", "/dbs/db/colls/c/docs/With%0DCR", nil},
		{"a tab is refused", "/dbs/db/colls/c/docs/With%09Tab", nil},
		{"a line feed is refused", "/dbs/db/colls/c/docs/With%0ALF", nil},
		{"DEL is refused", "/dbs/db/colls/c/docs/With%7FDel", nil},
		{"a C1 control is refused", "/dbs/db/colls/c/docs/With%C2%85NEL", nil},
		{"the account", "/", nil},
		{"the addresses feed", "//addresses/", []string{"addresses"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := gatewaySegments(tc.escaped)
			wantOK := tc.want != nil || tc.escaped == "/"
			if ok != wantOK || !slices.Equal(got, tc.want) {
				t.Fatalf("gatewaySegments(%q) = %q, %v; want %q, %v", tc.escaped, got, ok, tc.want, wantOK)
			}
		})
	}
}

// TestItemIdsAsTheRoutingGatewayAddressesThem replays azcosmos v1.5.0
// TestItemIdEncodingRoutingGW, whose statuses are the routing gateway's, with a client
// that signs and escapes as azcosmos does (cosmos.ItemPath: the id escaped once, the
// link signed as it is): the create is a 201 for every id, and the read, replace and
// delete answer according to how the gateway reads the path.
func TestItemIdsAsTheRoutingGatewayAddressesThem(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	cases := []struct {
		class string
		id    string
		after int // read and replace; a delete answers 204 for 200
	}{
		{"plain", "Test", 200},
		{"inner whitespace", "This is a test", 200},
		{"leading whitespace", " Test", 200},
		{"trailing whitespace", "Test ", 401},
		{"trailing whitespaces", "Test  ", 401},
		{"allowed specials", "WithAllowedSpecial,=.:~+-@()^${}[]!_Chars", 200},
		{"base64 with dashes", "BQE1D3PdG4N4bzU9TKaCIM3qc0TVcZ2-Y3jnsRfwdHC1ombkX3F1dot-SG0-UTq9AbgdX3kOWoP6qL6lJqWeKgV3zwWWPZO-t5X0ehJzv9LGkWld07LID2rhWhGT6huBM6Q=", 200},
		{"percent-encoded whitespace", "IdEndingWithPercentEncodedWhitespace%20", 401},
		{"percent-encoded special character", "WithPercentEncodedSpecialChar%E9%B1%80", 401},
		{"question mark", "Disallowed?Chars", 200},
		{"forward slash", "Disallowed/Chars", 401},
		{"backslash", `Disallowed\Chars`, 401},
		{"pound sign", "Disallowed#Chars", 401},
		{"carriage return", "With\rCarriageReturn", 400},
		{"tab", "With\tTab", 400},
		{"line feed", "With\nLineFeed", 400},
		{"unicode", "WithUnicode鱀", 200},
		{"a percent that begins no escape", "100%", 200},
		{"an invalid escape", "%zz", 200},
	}
	for _, tc := range cases {
		t.Run(tc.class, func(t *testing.T) {
			pk := pkHeader(stringPK(tc.id))
			doc := map[string]string{"id": tc.id, "pk": tc.id}
			if st, _ := sc(t)(c.do(ep, "POST", itemsPath(), pk, doc)); st != 201 {
				t.Fatalf("create → %d, want 201", st)
			}
			path := cosmos.ItemPath("db", "items", tc.id)
			steps := []struct {
				method string
				body   any
				want   int
			}{
				{"GET", nil, tc.after},
				{"PUT", doc, tc.after},
				{"PATCH", `{"operations":[{"op":"set","path":"/n","value":1}]}`, tc.after},
				{"DELETE", nil, tc.after},
			}
			for _, st := range steps {
				want := st.want
				if want == 200 && st.method == "DELETE" {
					want = 204
				}
				resp, err := c.do(ep, st.method, path, pk, st.body)
				got, _ := statusOf(t, resp, err)
				if got != want {
					t.Fatalf("%s → %d, want %d: %.300s", st.method, got, want, resp.Body)
				}
				switch want {
				case 400:
					// http.sys's page, not a Cosmos error: no gateway code saw the request.
					if !strings.Contains(string(resp.Body), "<TITLE>Bad Request</TITLE>") || resp.Header.Get(cosmos.HeaderActivityID) != "" {
						t.Fatalf("%s: a 400 with body %.200s and activity id %q, want http.sys's page and none", st.method, resp.Body, resp.Header.Get(cosmos.HeaderActivityID))
					}
				case 401:
					if !strings.Contains(string(resp.Body), "Server used the following payload to sign: '"+strings.ToLower(st.method)+"\\n") {
						t.Fatalf("%s: the 401 does not show the payload the emulator signed: %.400s", st.method, resp.Body)
					}
				}
			}
			if tc.after == 200 {
				return
			}
			// The document is there, under its id as created: a query finds it.
			q := merge(pk, map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"})
			body, _ := json.Marshal(map[string]any{"query": "SELECT VALUE c.id FROM c WHERE c.id = @id", "parameters": []map[string]string{{"name": "@id", "value": tc.id}}})
			resp := c.mustDo(ep, "POST", itemsPath(), q, body)
			var feed struct {
				Documents []string `json:"Documents"`
			}
			if err := json.Unmarshal(resp.Body, &feed); err != nil || len(feed.Documents) != 1 || feed.Documents[0] != tc.id {
				t.Fatalf("query for the id → %s (%v), want it once", resp.Body, err)
			}
		})
	}
}

// The 401 tells what the gateway addressed: for an id with trailing spaces, the link
// without them, as the service's message showed in Azure/azure-cosmos-dotnet-v3#3507.
func TestGateway401ShowsTheLinkItSigned(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	resp, err := c.do(s.Endpoint(), "GET", cosmos.ItemPath("db", "items", "12345 "), pkHeader(`["a"]`), nil)
	if st, _ := statusOf(t, resp, err); st != 401 {
		t.Fatalf("→ %d, want 401", st)
	}
	var body cosmos.ErrorBody
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body.Message, "payload to sign: 'get\ndocs\ndbs/db/colls/items/docs/12345\n") {
		t.Fatalf("message %q does not show the link without the space", body.Message)
	}
}

// Direct mode reaches a replica without a gateway: its path is decoded once, so every
// id the gateway reads differently is served there by the id as sent.
func TestReplicaAddressesKeepIdsTheGatewayReadsDifferently(t *testing.T) {
	s := startTest(t, httpReplicas, func(c *Config) { c.Ranges = 1 })
	c := newTestClient(t, s.Key())
	east := regionURL(t, s, "East US")
	addrs := fetchAddresses(t, c, east, "", false)
	if len(addrs) == 0 {
		t.Fatal("no addresses")
	}
	primary := ""
	for _, a := range addrs {
		if a.IsPrimary {
			primary = a.PhysicalURI
		}
	}
	for _, id := range []string{"Test ", "Id%20", "a%41", "Disallowed#Chars"} {
		pk := pkHeader(`["p"]`)
		doc := map[string]string{"id": id, "pk": "p"}
		if st, _ := sc(t)(c.do(s.Endpoint(), "POST", itemsPath(), pk, doc)); st != 201 {
			t.Fatalf("create %q → %d", id, st)
		}
		if st, _ := sc(t)(c.do(s.Endpoint(), "GET", cosmos.ItemPath("db", "items", id), pk, nil)); st != 401 {
			t.Fatalf("gateway read of %q → %d, want 401", id, st)
		}
		resp, err := replicaDo(c, primary, "GET", cosmos.ItemPath("db", "items", id), pk, nil)
		if st, _ := statusOf(t, resp, err); st != 200 || !strings.Contains(string(resp.Body), `"id":`+quoteJSON(id)) {
			t.Fatalf("replica read of %q → %d %.200s, want 200 with the document", id, st, resp.Body)
		}
	}
}

// The control API is the emulator's own, not the gateway's: an id in its path is
// decoded once, so a fault rule whose id holds a percent escape is removed by it.
func TestControlAPIPathsAreDecodedOnce(t *testing.T) {
	s := startTest(t)
	ctl, err := NewControlClient(s.Endpoint(), s.Key())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const id = "brown%41out "
	if _, err := ctl.AddFault(ctx, faults.Rule{ID: id, Effect: faults.EffectStatus, Status: 503}); err != nil {
		t.Fatalf("add: %v", err)
	}
	if err := ctl.RemoveFault(ctx, id); err != nil {
		t.Fatalf("remove %q: %v", id, err)
	}
	if rules, err := ctl.Faults(ctx); err != nil || len(rules) != 0 {
		t.Fatalf("rules after the remove: %+v, %v", rules, err)
	}
}
