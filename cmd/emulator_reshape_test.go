package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// reshapeEmulator is an emulator with database app, container items (four ranges,
// "", 10, 20, 30, FF) holding documents k0 … k39, and what it holds.
type reshapeEmulator struct {
	t   *testing.T
	srv *emulator.Server
	tr  *cosmos.Transport
	// epks are the documents' effective partition keys.
	epks []string
}

func newReshapeEmulator(t *testing.T, cfg emulator.Config) *reshapeEmulator {
	t.Helper()
	isolatedConfig(t, "")
	cfg.Databases = []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}
	srv, _, _ := fakeClockEmulator(t, cfg)
	cred, _ := cosmos.NewMasterKey(srv.Key())
	e := &reshapeEmulator{t: t, srv: srv, tr: &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}}
	for i := range 40 {
		k := fmt.Sprint("k", i)
		req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath("app", "items"), Header: http.Header{},
			Body: fmt.Appendf(nil, `{"id":%q,"pk":%q}`, k, k)}
		req.Header.Set(cosmos.HeaderPartitionKey, fmt.Sprintf(`[%q]`, k))
		if _, err := e.tr.Do(context.Background(), srv.Endpoint(), req); err != nil {
			t.Fatal(err)
		}
		pk, err := cosmos.ParsePartitionKeyJSON(fmt.Sprintf(`[%q]`, k))
		if err != nil {
			t.Fatal(err)
		}
		e.epks = append(e.epks, cosmos.EffectivePartitionKey(pk))
	}
	return e
}

// documentsIn counts the documents whose key lies in [lo, hi).
func (e *reshapeEmulator) documentsIn(lo, hi string) int {
	n := 0
	for _, k := range e.epks {
		if k >= lo && (hi == "FF" || k < hi) {
			n++
		}
	}
	return n
}

// ranges are the container's ranges as the ranges feed lists them.
func (e *reshapeEmulator) ranges() []string {
	e.t.Helper()
	resp, err := e.tr.Do(context.Background(), e.srv.Endpoint(), &cosmos.Request{Method: http.MethodGet, Path: cosmos.PKRangesPath("app", "items")})
	if err != nil {
		e.t.Fatal(err)
	}
	var feed cosmos.PartitionKeyRangeFeed
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		e.t.Fatal(err)
	}
	var ids []string
	for _, r := range feed.Ranges {
		ids = append(ids, fmt.Sprintf("%s[%s,%s)%v", r.ID, r.MinInclusive, r.MaxExclusive, r.Parents))
	}
	return ids
}

func TestEmulatorSplitAndMergePrintWhatChanged(t *testing.T) {
	e := newReshapeEmulator(t, emulator.Config{})
	ep := e.srv.Endpoint()

	code, out, errOut := runControl(ep, "emulator", "split", "1", "--at", "18")
	want := fmt.Sprintf(""+
		"split range 1 of app/items into 4 and 5\n"+
		"RANGE  MIN  MAX  PARENTS  DOCUMENTS\n"+
		"4      10   18   1        %d\n"+
		"5      18   20   1        %d\n", e.documentsIn("10", "18"), e.documentsIn("18", "20"))
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("emulator split 1 --at 18 → %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}

	code, out, errOut = runControl(ep, "emulator", "merge", "3", "2", "-o", "json")
	var merged emulatorRangeChangeJSON
	if err := json.Unmarshal([]byte(out), &merged); code != 0 || err != nil {
		t.Fatalf("emulator merge 3 2 -o json → %d %q %q (%v)", code, out, errOut, err)
	}
	wantMerged := emulatorRangeChangeJSON{Database: "app", Container: "items", Retired: []string{"2", "3"},
		Created: []emulatorRangeJSON{{ID: "6", MinInclusive: "20", MaxExclusive: "FF", Parents: []string{"2", "3"}, DocumentCount: e.documentsIn("20", "FF")}}}
	if fmt.Sprint(merged) != fmt.Sprint(wantMerged) {
		t.Errorf("merge printed %+v, want %+v", merged, wantMerged)
	}

	code, out, _ = runControl(ep, "emulator", "split", "0", "--at", "08", "-o", "tsv", "--database", "app", "--container", "items")
	wantTSV := fmt.Sprintf("RANGE\tMIN\tMAX\tPARENTS\tDOCUMENTS\n7\t\t08\t0\t%d\n8\t08\t10\t0\t%d\n", e.documentsIn("", "08"), e.documentsIn("08", "10"))
	if code != 0 || out != wantTSV {
		t.Errorf("emulator split 0 -o tsv → %d\n%q\nwant\n%q", code, out, wantTSV)
	}

	wantRanges := []string{"4[10,18)[1]", "5[18,20)[1]", "6[20,FF)[2 3]", "7[,08)[0]", "8[08,10)[0]"}
	if got := e.ranges(); !slices.Equal(got, wantRanges) {
		t.Errorf("the ranges feed lists %v, want %v", got, wantRanges)
	}
}

func TestEmulatorSplitFindsTheContainerAsTheDataCommandsDo(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		says string
	}{
		{"the emulator's only database and container", nil, nil, 0, "of app/items"},
		{"the flags", nil, []string{"--database", "app", "--container", "items"}, 0, "of app/items"},
		{"the environment", map[string]string{"COSMOSCTL_DATABASE": "app", "COSMOSCTL_CONTAINER": "items"}, nil, 0, "of app/items"},
		{"a flag beats the environment", map[string]string{"COSMOSCTL_CONTAINER": "orders"}, []string{"--container", "items"}, 0, "of app/items"},
		{"a container the emulator lacks", map[string]string{"COSMOSCTL_CONTAINER": "orders"}, nil, ExitNotFound, `container "orders" does not exist`},
		{"a database the emulator lacks", nil, []string{"--database", "shop"}, ExitUsage, "has no database shop (it has app)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newReshapeEmulator(t, emulator.Config{})
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out, errOut := runControl(e.srv.Endpoint(), append([]string{"emulator", "split", "1"}, tc.args...)...)
			got := out
			if tc.code != 0 {
				got = errOut
			}
			if code != tc.code || !strings.Contains(got, tc.says) {
				t.Fatalf("→ exit %d, stdout %q, stderr %q; want exit %d saying %q", code, out, errOut, tc.code, tc.says)
			}
		})
	}
}

func TestEmulatorSplitAndMergeRefusals(t *testing.T) {
	e := newReshapeEmulator(t, emulator.Config{})
	persistent := newReshapeEmulator(t, emulator.Config{DataDir: t.TempDir()})
	one := newReshapeEmulator(t, emulator.Config{Ranges: 1})
	cases := []struct {
		name     string
		endpoint string
		args     []string
		code     int
		says     string
	}{
		{"ranges that are not neighbours", e.srv.Endpoint(), []string{"merge", "0", "2"}, ExitUsage, "ranges 0 and 2 are not adjacent"},
		{"a range merged with itself", e.srv.Endpoint(), []string{"merge", "1", "1"}, ExitUsage, "two different ranges"},
		{"a range the container lacks", e.srv.Endpoint(), []string{"split", "9"}, ExitUsage, `no partition key range "9"; its ranges are 0, 1, 2, 3`},
		{"no range, of a container of four", e.srv.Endpoint(), []string{"split"}, ExitUsage, "name the range to split (ranges of items: 0, 1, 2, 3)"},
		{"a boundary outside the range", e.srv.Endpoint(), []string{"split", "0", "--at", "30"}, ExitUsage, "the boundary must lie strictly inside it"},
		{"a boundary that is not a key", e.srv.Endpoint(), []string{"split", "0", "--at", "0x10"}, ExitUsage, "--at must be an effective partition key"},
		{"a container the emulator lacks", e.srv.Endpoint(), []string{"merge", "2", "3", "--container", "orders"}, ExitNotFound, `container "orders" does not exist`},
		{"one range to merge", e.srv.Endpoint(), []string{"merge", "2"}, ExitUsage, "needs two adjacent range ids"},
		{"two ranges to split", e.srv.Endpoint(), []string{"split", "2", "3"}, ExitUsage, "too many arguments"},
		{"a persistent emulator", persistent.srv.Endpoint(), []string{"split", "1"}, ExitUsage, "not supported on a persistent emulator (--data-dir)"},
		{"an emulator that does not answer", "http://127.0.0.1:1", []string{"merge", "2", "3"}, ExitUnavailable, "connection refused"},
		{"an emulator that does not answer, the container given", "http://127.0.0.1:1", []string{"split", "1", "--database", "app", "--container", "items"}, ExitUnavailable, "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runControl(tc.endpoint, append([]string{"emulator"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.says) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || out != "" {
				t.Fatalf("→ exit %d, stdout %q, stderr %q; want exit %d and one line saying %q", code, out, errOut, tc.code, tc.says)
			}
		})
	}
	if got := e.ranges(); len(got) != 4 {
		t.Errorf("refused splits and merges changed the ranges: %v", got)
	}

	t.Run("a container of one range splits without naming it", func(t *testing.T) {
		code, out, errOut := runControl(one.srv.Endpoint(), "emulator", "split")
		if code != 0 || !strings.HasPrefix(out, "split range 0 of app/items into 1 and 2\n") {
			t.Fatalf("→ exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
}
