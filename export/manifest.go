package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/shardscope"
	"github.com/cosmosctl/cosmosctl/shard"
)

const (
	manifestKind    = "cosmosctl-export-manifest"
	manifestVersion = 1
	// ManifestSuffix names a shard's manifest beside its output file when --manifest
	// does not.
	ManifestSuffix = ".manifest.json"
	maxManifest    = 4 << 20
)

// Manifest is what one shard of an export says of itself, for `export merge`: which
// shard of which export, whether it is complete, and where its items are.
type Manifest struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
	// Endpoint, Database, Container, Source, Query, Parameters, Strip and Filter are the
	// export's: the shards of one export agree on them.
	Endpoint   string          `json:"endpoint"`
	Database   string          `json:"database"`
	Container  string          `json:"container"`
	Source     string          `json:"source"`
	Query      string          `json:"query,omitempty"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Strip      []string        `json:"strip"`
	Filter     string          `json:"filter,omitempty"`
	// Shard is the shard's spec, interval and the ranges its plan was computed from.
	Shard *shardscope.Scope `json:"shard"`
	// Output is the shard's output file, absolute; Items and Bytes what it holds.
	Output   string    `json:"output"`
	Complete bool      `json:"complete"`
	Items    int64     `json:"items"`
	Bytes    int64     `json:"bytes"`
	SavedAt  time.Time `json:"saved_at"`
	path     string
}

// NewManifest is the manifest of a shard of the export b, not yet complete.
func NewManifest(b Binding) *Manifest {
	b = NewState(b).Binding
	return &Manifest{Kind: manifestKind, Version: manifestVersion, Endpoint: b.Endpoint, Database: b.Database, Container: b.Container,
		Source: b.Source, Query: b.Query, Parameters: b.Parameters, Strip: b.Strip, Filter: b.Filter, Shard: b.Shard, Output: b.Output}
}

// Save replaces the manifest file atomically.
func (m *Manifest) Save(path string, now time.Time) error {
	m.SavedAt = now.UTC()
	return saveJSON(path, m)
}

// LoadManifest reads a manifest a shard wrote.
func LoadManifest(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, err
	}
	var m Manifest
	switch {
	case len(b) > maxManifest:
		return nil, fmt.Errorf("%s is too large to be an export manifest", path)
	case json.Unmarshal(b, &m) != nil:
		return nil, fmt.Errorf("%s is not an export manifest (not valid JSON)", path)
	case m.Kind != manifestKind:
		return nil, fmt.Errorf("%s is not an export manifest (its kind is %q)", path, m.Kind)
	case m.Version != manifestVersion:
		return nil, fmt.Errorf("%s was written by another version of cosmosctl (manifest format %d, this one reads %d)", path, m.Version, manifestVersion)
	case m.Shard == nil:
		return nil, fmt.Errorf("%s names no shard: it is damaged", path)
	}
	m.path = path
	return &m, nil
}

// ManifestPaths are the manifests args name: files, and in a directory every file whose
// name ends in ManifestSuffix.
func ManifestPaths(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		found, err := filepath.Glob(filepath.Join(a, "*"+ManifestSuffix))
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("directory %s holds no *%s file", a, ManifestSuffix)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// IncompleteError is a set of shards that cannot be merged yet: some are missing, some
// have not completed. Running or resuming them could make the merge work.
type IncompleteError struct {
	Missing    []string // "2/4", or the gaps of feed ranges
	Incomplete []string // "shard 1/4 (file.ndjson: 1,234 items so far)"
}

func (e *IncompleteError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing: "+strings.Join(e.Missing, ", "))
	}
	if len(e.Incomplete) > 0 {
		parts = append(parts, "not complete: "+strings.Join(e.Incomplete, ", "))
	}
	return "the shards cannot be merged yet: " + strings.Join(parts, "; ") + ": run (or resume with the same command and --state) the shards named, then merge again"
}

// CheckShards checks that the manifests are the whole of one export: the same export
// of the same container, the shards of one plan (same N, each index once) or feed
// ranges, intervals that tile ["", "FF") exactly, each complete. It returns them in
// EPK order. An *IncompleteError says what is missing or unfinished; any other error
// is manifests that can never merge (another export's, an overlap).
func CheckShards(ms []*Manifest) ([]*Manifest, error) {
	if len(ms) == 0 {
		return nil, errors.New("no manifest given: name each shard's manifest, or the directory that holds them")
	}
	first := ms[0]
	for _, m := range ms[1:] {
		for _, f := range []struct{ what, a, b string }{
			{"account", first.Endpoint, m.Endpoint},
			{"database", first.Database, m.Database},
			{"container", first.Container, m.Container},
			{"source", first.Source, m.Source},
			{"query", first.Query, m.Query},
			{"query parameters", compact(first.Parameters), compact(m.Parameters)},
			{"stripped properties", fmt.Sprint(first.Strip), fmt.Sprint(m.Strip)},
			{"--jq filter", first.Filter, m.Filter},
		} {
			if f.a != f.b {
				return nil, fmt.Errorf("%s and %s are shards of different exports: their %s is %s and %s; merge the shards of one export", first.path, m.path, f.what, quoted(f.a), quoted(f.b))
			}
		}
		if (first.Shard.Count > 0) != (m.Shard.Count > 0) || first.Shard.Count != m.Shard.Count {
			return nil, fmt.Errorf("%s is %s and %s is %s: shards of different plans; merge the shards of one --shard i/N run (or of --feed-range runs only)", first.path, first.Shard, m.path, m.Shard)
		}
	}
	sorted := append([]*Manifest(nil), ms...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].Shard, sorted[j].Shard
		if c := strings.Compare(strings.ToUpper(a.Min), strings.ToUpper(b.Min)); c != 0 {
			return c < 0
		}
		return a.Index < b.Index
	})
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1], sorted[i]
		if a.Shard.Count > 0 && a.Shard.Index == b.Shard.Index {
			return nil, fmt.Errorf("%s and %s are both shard %s: give each shard's manifest once", a.path, b.path, a.Shard.Spec())
		}
		if strings.Compare(strings.ToUpper(b.Shard.Min), strings.ToUpper(a.Shard.Max)) < 0 {
			return nil, fmt.Errorf("%s (%s) and %s (%s) overlap: %s; their plans were computed from different ranges (a split between the shards' starts?): run the export again with one plan", a.path, a.Shard, b.path, b.Shard, planNote(a, b))
		}
	}
	ie := &IncompleteError{}
	if n := first.Shard.Count; n > 0 {
		have := map[int]bool{}
		for _, m := range sorted {
			have[m.Shard.Index] = true
		}
		for i := range n {
			if !have[i] {
				ie.Missing = append(ie.Missing, fmt.Sprintf("shard %d/%d", i, n))
			}
		}
	}
	ivs := make([]shard.Interval, len(sorted))
	for i, m := range sorted {
		ivs[i] = shard.Interval{Min: m.Shard.Min, Max: m.Shard.Max}
	}
	if err := shard.Tiles(ivs); err != nil && len(ie.Missing) == 0 {
		if first.Shard.Count > 0 {
			// Every index is there, yet they do not tile: the shards planned from
			// different ranges.
			return nil, fmt.Errorf("the %d shards' intervals do not tile the container (%v): their plans were computed from different partition key ranges (a split between the shards' starts); run the export again", len(sorted), err)
		}
		ie.Missing = append(ie.Missing, "feed ranges: "+err.Error())
	}
	for _, m := range sorted {
		if !m.Complete {
			ie.Incomplete = append(ie.Incomplete, fmt.Sprintf("%s (%s: %d items so far)", m.Shard, m.Output, m.Items))
		}
	}
	if len(ie.Missing) > 0 || len(ie.Incomplete) > 0 {
		return nil, ie
	}
	return sorted, nil
}

func planNote(a, b *Manifest) string {
	ids := func(m *Manifest) string {
		var s []string
		for _, r := range m.Shard.Ranges {
			s = append(s, r.ID)
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	return fmt.Sprintf("one planned from ranges %s, the other from %s", ids(a), ids(b))
}

// MergeOutputs copies the shards' output files, in EPK order, to w, each checked to
// hold the bytes its manifest counts; it returns the items and bytes copied.
func MergeOutputs(w io.Writer, ms []*Manifest) (items, n int64, err error) {
	for _, m := range ms {
		f, err := os.Open(m.Output)
		if errors.Is(err, fs.ErrNotExist) {
			return items, n, fmt.Errorf("the output file %s of %s (manifest %s) is gone", m.Output, m.Shard, m.path)
		}
		if err != nil {
			return items, n, err
		}
		fi, err := f.Stat()
		if err == nil && fi.Size() != m.Bytes {
			err = fmt.Errorf("the output file %s of %s holds %d bytes, not the %d its manifest %s counts: it changed since the shard completed; run the shard again", m.Output, m.Shard, fi.Size(), m.Bytes, m.path)
		}
		if err == nil {
			var c int64
			c, err = io.Copy(w, f)
			n += c
		}
		f.Close()
		if err != nil {
			return items, n, err
		}
		items += m.Items
	}
	return items, n, nil
}

// Path is the file the manifest was read from.
func (m *Manifest) Path() string { return m.path }
