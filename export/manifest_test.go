package export

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/shardscope"
)

func manifestOf(idx, n int, min, max string, complete bool) *Manifest {
	m := NewManifest(Binding{Endpoint: "https://a/", Database: "db", Container: "c", Source: SourceQuery, Query: "SELECT * FROM c",
		Shard: &shardscope.Scope{Index: idx, Count: n, Min: min, Max: max}})
	m.Complete, m.path = complete, "m"+string(rune('0'+idx))
	return m
}

func TestCheckShards(t *testing.T) {
	whole := func() []*Manifest {
		return []*Manifest{manifestOf(2, 3, "AA", "FF", true), manifestOf(0, 3, "", "55", true), manifestOf(1, 3, "55", "AA", true)}
	}
	got, err := CheckShards(whole())
	if err != nil || got[0].Shard.Index != 0 || got[2].Shard.Index != 2 {
		t.Fatalf("three shards that tile: %v, want them in EPK order", err)
	}
	for _, tc := range []struct {
		name       string
		ms         []*Manifest
		incomplete bool
		want       string
	}{
		{"a shard missing", whole()[:2], true, "missing: shard 1/3"},
		{"a shard not complete", append(whole()[:2], manifestOf(1, 3, "55", "AA", false)), true, "not complete: shard 1/3"},
		{"a shard twice", append(whole(), manifestOf(1, 3, "55", "AA", true)), false, "both shard 1/3"},
		{"another plan", append(whole()[:2], manifestOf(1, 4, "55", "AA", true)), false, "different plans"},
		{"plans from different ranges overlap", append(whole()[:2], manifestOf(1, 3, "50", "AA", true)), false, "overlap"},
		{"plans from different ranges leave a gap", append(whole()[:2], manifestOf(1, 3, "60", "AA", true)), false, "do not tile"},
	} {
		_, err := CheckShards(tc.ms)
		var ie *IncompleteError
		if err == nil || errors.As(err, &ie) != tc.incomplete || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (incomplete %v), want %q", tc.name, err, tc.incomplete, tc.want)
		}
	}
	other := whole()
	other[1].Query = "SELECT c.id FROM c"
	if _, err := CheckShards(other); err == nil || !strings.Contains(err.Error(), "different exports") {
		t.Errorf("shards of another query: %v", err)
	}
}

func TestMergeOutputsRefusesAFileThatChanged(t *testing.T) {
	dir := t.TempDir()
	var ms []*Manifest
	for i, body := range []string{"{\"id\":\"a\"}\n", "{\"id\":\"b\"}\n{\"id\":\"c\"}\n"} {
		m := manifestOf(i, 2, []string{"", "80"}[i], []string{"80", "FF"}[i], true)
		m.Output = filepath.Join(dir, m.path)
		m.Items, m.Bytes = int64(strings.Count(body, "\n")), int64(len(body))
		if err := os.WriteFile(m.Output, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		path := m.Output + ManifestSuffix
		if err := m.Save(path, time.Now()); err != nil {
			t.Fatal(err)
		}
		loaded, err := LoadManifest(path)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, loaded)
	}
	var out bytes.Buffer
	items, _, err := MergeOutputs(&out, ms)
	if err != nil || items != 3 || out.String() != "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n" {
		t.Fatalf("merge: %v, %d items, %q", err, items, out.String())
	}
	if err := os.WriteFile(ms[1].Output, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MergeOutputs(&out, ms); err == nil || !strings.Contains(err.Error(), "changed since the shard completed") {
		t.Fatalf("a changed file: %v", err)
	}
}
