package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// regionCacheTTL is how long completion trusts the region names it read: an account's
// regions change rarely, and a Tab should not cost a round trip to the account each time.
const regionCacheTTL = 5 * time.Minute

// regionCache is one account's region names in the user's cache directory, in
// cosmosctl/completion/regions-HASH.json (HASH from the endpoint; the file holds no key).
type regionCache struct {
	path     string // "" when there is no cache directory: nothing is cached
	endpoint string
}

type regionCacheFile struct {
	Endpoint string    `json:"endpoint"`
	Regions  []string  `json:"regions"`
	Fetched  time.Time `json:"fetched"`
}

func regionCacheFor(endpoint string) regionCache {
	dir, err := os.UserCacheDir()
	if err != nil {
		return regionCache{endpoint: endpoint}
	}
	sum := sha256.Sum256([]byte(endpoint))
	return regionCache{endpoint: endpoint,
		path: filepath.Join(dir, "cosmosctl", "completion", "regions-"+hex.EncodeToString(sum[:8])+".json")}
}

// load returns the cached names and whether they were fetched within regionCacheTTL
// of now. A zero now accepts any age.
func (c regionCache) load(now time.Time) ([]string, bool) {
	if c.path == "" {
		return nil, false
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		return nil, false
	}
	var f regionCacheFile
	if json.Unmarshal(data, &f) != nil || f.Endpoint != c.endpoint || len(f.Regions) == 0 {
		return nil, false
	}
	fresh := now.IsZero() || (now.Sub(f.Fetched) < regionCacheTTL && !f.Fetched.After(now))
	return f.Regions, fresh
}

// store writes the names, best effort: a cache that cannot be written only costs speed.
// The file is replaced atomically, so that concurrent completions never read half of it.
func (c regionCache) store(names []string, now time.Time) {
	if c.path == "" {
		return
	}
	data, err := json.Marshal(regionCacheFile{Endpoint: c.endpoint, Regions: names, Fetched: now.UTC()})
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".regions-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), c.path) != nil {
		os.Remove(tmp.Name())
	}
}
