package emulator

import (
	"encoding/json"
	"strings"
	"testing"
)

// Container policies: filled in as the service fills them in, stored as sent, or
// refused with a 400 naming them when the emulator cannot honour them.
func TestContainerPoliciesStoredFilledInOrRefused(t *testing.T) {
	s := startTest(t)
	multi := startTest(t, func(cfg *Config) { cfg.MultiWrite = true })
	type got struct {
		ConflictResolutionPolicy map[string]string `json:"conflictResolutionPolicy"`
		GeospatialConfig         map[string]string `json:"geospatialConfig"`
		AnalyticalStorageTTL     *int              `json:"analyticalStorageTtl"`
		ChangeFeedPolicy         json.RawMessage   `json:"changeFeedPolicy"`
	}
	cases := []struct {
		name   string
		server *Server
		body   string
		status int
		says   string // in the refusal
		check  func(t *testing.T, g got)
	}{
		{name: "no policy: last writer wins on _ts and Geography, as the service fills in", server: s,
			body: `{"id":"c1","partitionKey":{"paths":["/pk"]}}`, status: 201,
			check: func(t *testing.T, g got) {
				if g.ConflictResolutionPolicy["mode"] != "LastWriterWins" || g.ConflictResolutionPolicy["conflictResolutionPath"] != "/_ts" || g.GeospatialConfig["type"] != "Geography" {
					t.Errorf("defaults %+v %+v", g.ConflictResolutionPolicy, g.GeospatialConfig)
				}
			}},
		{name: "last writer wins on a path of its own, on a single-write account", server: s,
			body: `{"id":"c2","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"LastWriterWins","conflictResolutionPath":"/lww"}}`, status: 201,
			check: func(t *testing.T, g got) {
				if g.ConflictResolutionPolicy["conflictResolutionPath"] != "/lww" {
					t.Errorf("policy %+v", g.ConflictResolutionPolicy)
				}
			}},
		{name: "a custom procedure by name comes back as its link", server: s,
			body: `{"id":"c3","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"Custom","conflictResolutionProcedure":"resolver"}}`, status: 201,
			check: func(t *testing.T, g got) {
				if g.ConflictResolutionPolicy["mode"] != "Custom" || g.ConflictResolutionPolicy["conflictResolutionProcedure"] != "dbs/db/colls/c3/sprocs/resolver" {
					t.Errorf("policy %+v", g.ConflictResolutionPolicy)
				}
			}},
		{name: "analytical TTL, change feed policy and geometry are stored as sent", server: s,
			body: `{"id":"c4","partitionKey":{"paths":["/pk"]},"analyticalStorageTtl":-1,"changeFeedPolicy":{"retentionDuration":10},"geospatialConfig":{"type":"Geometry"},"computedProperties":[]}`, status: 201,
			check: func(t *testing.T, g got) {
				if g.AnalyticalStorageTTL == nil || *g.AnalyticalStorageTTL != -1 || string(g.ChangeFeedPolicy) != `{"retentionDuration":10}` || g.GeospatialConfig["type"] != "Geometry" {
					t.Errorf("stored %+v %s", g, g.ChangeFeedPolicy)
				}
			}},
		{name: "a custom policy on a multi-write account", server: multi,
			body: `{"id":"m1","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"Custom"}}`, status: 400, says: "conflictResolutionPolicy"},
		{name: "last writer wins on another path on a multi-write account", server: multi,
			body: `{"id":"m2","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"LastWriterWins","conflictResolutionPath":"/v"}}`, status: 400, says: "conflictResolutionPolicy"},
		{name: "the default policy on a multi-write account", server: multi,
			body: `{"id":"m3","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"LastWriterWins","conflictResolutionPath":"/_ts"}}`, status: 201},
		{name: "an unknown mode", server: s,
			body: `{"id":"c5","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"FirstWins"}}`, status: 400, says: "conflictResolutionPolicy mode"},
		{name: "computed properties", server: s,
			body: `{"id":"c6","partitionKey":{"paths":["/pk"]},"computedProperties":[{"name":"lower","query":"SELECT VALUE LOWER(c.name) FROM c"}]}`, status: 400, says: "computedProperties"},
		{name: "client encryption", server: s,
			body: `{"id":"c7","partitionKey":{"paths":["/pk"]},"clientEncryptionPolicy":{"includedPaths":[],"policyFormatVersion":1}}`, status: 400, says: "clientEncryptionPolicy"},
		{name: "ttlPropertyPath", server: s,
			body: `{"id":"c8","partitionKey":{"paths":["/pk"]},"defaultTtl":10,"ttlPropertyPath":"/created"}`, status: 400, says: "ttlPropertyPath"},
		{name: "eleven unique keys", server: s,
			body: `{"id":"c9","partitionKey":{"paths":["/pk"]},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/a"]},{"paths":["/b"]},{"paths":["/c"]},{"paths":["/d"]},{"paths":["/e"]},{"paths":["/f"]},{"paths":["/g"]},{"paths":["/h"]},{"paths":["/i"]},{"paths":["/j"]},{"paths":["/k"]}]}}`, status: 400, says: "limit is 10"},
		{name: "seventeen unique key paths", server: s,
			body: `{"id":"c10","partitionKey":{"paths":["/pk"]},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/a","/b","/c","/d","/e","/f","/g","/h","/i"]},{"paths":["/j","/k","/l","/m","/n","/o","/p","/q"]}]}}`, status: 400, says: "limit is 16"},
		{name: "a unique key path without its slash", server: s,
			body: `{"id":"c11","partitionKey":{"paths":["/pk"]},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["email"]}]}}`, status: 400, says: "must start with /"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, tc.server.Key())
			ep := tc.server.Endpoint()
			r := c.mustDo(ep, "POST", "/dbs/db/colls", nil, tc.body)
			if r.StatusCode != tc.status || !strings.Contains(string(r.Body), tc.says) {
				t.Fatalf("→ %d %s, want %d naming %q", r.StatusCode, r.Body, tc.status, tc.says)
			}
			if tc.check == nil {
				return
			}
			var created, read got
			json.Unmarshal(r.Body, &created)
			var id struct{ ID string }
			json.Unmarshal([]byte(tc.body), &id)
			json.Unmarshal(c.mustDo(ep, "GET", "/dbs/db/colls/"+id.ID, nil).Body, &read)
			tc.check(t, created)
			tc.check(t, read)
		})
	}
}

// The conflict resolution policy is fixed at creation: a replace may leave it out (it
// is kept) or repeat it, not change it.
func TestContainerReplaceKeepsTheConflictResolutionPolicy(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	if r := c.mustDo(ep, "POST", "/dbs/db/colls", nil, `{"id":"c","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"Custom","conflictResolutionProcedure":"resolver"}}`); r.StatusCode != 201 {
		t.Fatalf("create → %d %s", r.StatusCode, r.Body)
	}
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"left out", `{"id":"c","partitionKey":{"paths":["/pk"]}}`, 200},
		{"repeated by name", `{"id":"c","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"Custom","conflictResolutionProcedure":"resolver"}}`, 200},
		{"repeated as read", `{"id":"c","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"Custom","conflictResolutionPath":"","conflictResolutionProcedure":"dbs/db/colls/c/sprocs/resolver"}}`, 200},
		{"changed", `{"id":"c","partitionKey":{"paths":["/pk"]},"conflictResolutionPolicy":{"mode":"LastWriterWins"}}`, 400},
	} {
		r := c.mustDo(ep, "PUT", "/dbs/db/colls/c", nil, tc.body)
		if r.StatusCode != tc.status {
			t.Errorf("%s → %d %s, want %d", tc.name, r.StatusCode, r.Body, tc.status)
		}
		var g struct {
			P map[string]string `json:"conflictResolutionPolicy"`
		}
		json.Unmarshal(c.mustDo(ep, "GET", "/dbs/db/colls/c", nil).Body, &g)
		if g.P["mode"] != "Custom" || g.P["conflictResolutionProcedure"] != "dbs/db/colls/c/sprocs/resolver" {
			t.Errorf("%s: the policy is now %+v", tc.name, g.P)
		}
	}
}
