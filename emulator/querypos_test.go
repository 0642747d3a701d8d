package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// queryPages runs q page by page (pages of size), calling between after each page but
// the last, and returns the ids in the order they came.
func queryPages(t *testing.T, s *Server, c *testClient, hdr map[string]string, q string, size int, between func(page int, returned []string)) []string {
	t.Helper()
	var ids []string
	cont := ""
	for page := 0; page < 100; page++ {
		h := merge(hdr, map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json", cosmos.HeaderMaxItemCount: fmt.Sprint(size)})
		if cont != "" {
			h[cosmos.HeaderContinuation] = cont
		}
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), h, cosmos.QuerySpec{Query: q})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		var feed struct{ Documents []struct{ ID string } }
		if err := json.Unmarshal(resp.Body, &feed); err != nil {
			t.Fatal(err)
		}
		for _, d := range feed.Documents {
			ids = append(ids, d.ID)
		}
		cont = resp.Header.Get(cosmos.HeaderContinuation)
		if cont == "" {
			return ids
		}
		if strings.Contains(cont, "skip") || strings.HasPrefix(cont, "{") {
			t.Fatalf("continuation %q is not opaque", cont)
		}
		if between != nil {
			between(page, ids)
		}
	}
	t.Fatal("the query never ended")
	return nil
}

func TestQueryContinuationIsAPositionNotAnOffset(t *testing.T) {
	cross := map[string]string{cosmos.HeaderEnableCrossPartition: "true"}
	single := pkHeader(`["a"]`)
	cases := []struct {
		name string
		hdr  map[string]string
		pk   func(i int) string
	}{
		{"an insert between pages of a single-partition query neither skips nor repeats", single, func(int) string { return "a" }},
		{"an insert between pages of a cross-partition query neither skips nor repeats", cross, func(i int) string { return fmt.Sprintf("k%d", i) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startTest(t)
			c := newTestClient(t, s.Key())
			create := func(id, pk string) {
				t.Helper()
				resp, err := c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["`+pk+`"]`), fmt.Sprintf(`{"id":%q,"pk":%q}`, id, pk))
				if code, _ := statusOf(t, resp, err); code != http.StatusCreated {
					t.Fatalf("create %s: %d", id, code)
				}
			}
			var want []string
			for i := 0; i < 20; i++ {
				id := fmt.Sprintf("old%02d", i)
				create(id, tc.pk(i))
				want = append(want, id)
			}
			inserted := 0
			got := queryPages(t, s, c, tc.hdr, "SELECT * FROM c", 6, func(page int, returned []string) {
				// Inserts land after every existing document of their range, and a
				// delete of an already returned document must not shift the rest.
				create(fmt.Sprintf("new%02d", inserted), tc.pk(100+inserted))
				inserted++
				if page == 0 {
					var n int
					fmt.Sscanf(returned[0], "old%d", &n)
					resp, err := c.do(s.Endpoint(), "DELETE", itemsPath()+"/"+returned[0], pkHeader(`["`+tc.pk(n)+`"]`), nil)
					if code, _ := statusOf(t, resp, err); code != http.StatusNoContent {
						t.Fatalf("delete: %d", code)
					}
				}
			})
			seen := map[string]int{}
			for _, id := range got {
				seen[id]++
				if seen[id] > 1 {
					t.Errorf("%s returned twice: %v", id, got)
				}
			}
			for _, id := range want {
				if seen[id] == 0 {
					t.Errorf("%s was skipped: %v", id, got)
				}
			}
		})
	}
}

func TestQueryContinuationKeepsTop(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for i := 0; i < 12; i++ {
		c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["a"]`), fmt.Sprintf(`{"id":"%02d","pk":"a"}`, i))
	}
	got := queryPages(t, s, c, pkHeader(`["a"]`), "SELECT TOP 7 * FROM c", 3, nil)
	if want := []string{"00", "01", "02", "03", "04", "05", "06"}; !slices.Equal(got, want) {
		t.Errorf("TOP 7 in pages of 3 returned %v, want %v", got, want)
	}
}

func TestQueryContinuationRefusesOffsetsAndForeignTokens(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	cases := []struct {
		name, token, message string
	}{
		{"an offset token from an older emulator is a clear 400", `{"skip":5}`, "offset token from an older emulator"},
		{"garbage is a 400", "not-a-token!", "not one this emulator issued"},
		{"a token naming a range the container lacks is a 400", queryPosition{Range: "9", Seq: 1}.token(), "issued for another container"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json", cosmos.HeaderEnableCrossPartition: "true", cosmos.HeaderContinuation: tc.token}
			resp, err := c.do(s.Endpoint(), "POST", itemsPath(), hdr, cosmos.QuerySpec{Query: "SELECT * FROM c"})
			if code, _ := statusOf(t, resp, err); code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", code)
			}
			if !strings.Contains(string(resp.Body), tc.message) {
				t.Errorf("message %s does not say %q", resp.Body, tc.message)
			}
		})
	}
}
