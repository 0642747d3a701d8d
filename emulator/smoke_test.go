package emulator

import (
	"encoding/json"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestSmokeCreateRead(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	resp, err := c.do(s.Endpoint(), "GET", "/", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var acct cosmos.Account
	json.Unmarshal(resp.Body, &acct)
	t.Logf("%s", resp.Body)
	resp, err = c.do(s.Endpoint(), "POST", cosmos.ItemsPath("db", "items"), pkHeader(`["a"]`), `{"id":"1","pk":"a","n":1}`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d %s %v", resp.StatusCode, resp.Body, resp.Header)
	resp, err = c.do(acct.ReadableLocations[1].Endpoint, "GET", cosmos.ItemPath("db", "items", "1"), pkHeader(`["a"]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d %s %s", resp.StatusCode, resp.Body, resp.Region)
}
