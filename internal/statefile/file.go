package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// MaxSize is the largest state file Load reads. State files are small (a few regions,
// a few hundred latency samples); a larger one is not ours, or is damaged.
const MaxSize = 8 << 20

// envelope is what a state file holds: the data, and what it was written for.
type envelope struct {
	Kind      string          `json:"kind"`
	Version   int             `json:"version"`
	Endpoint  string          `json:"endpoint"`
	WrittenAt time.Time       `json:"written_at"`
	Data      json.RawMessage `json:"data"`
}

// Ignored is the error Load returns for a state file it cannot use: corrupt, too large,
// or written for another kind of state, another version of its format or another
// account. The state it held is lost, which costs rediscovery and nothing else: callers
// print the error as one notice and carry on, and the next Update replaces the file.
type Ignored struct {
	Path    string
	Problem string // what is wrong, e.g. "not valid JSON (unexpected end of JSON input)"
	Err     error  // the underlying error, if any
}

func (e *Ignored) Error() string {
	return fmt.Sprintf("ignoring state file %s: %s; it will be replaced", e.Path, oneLine(e.Problem))
}

func (e *Ignored) Unwrap() error { return e.Err }

// Load reads the state of one kind, format version and account endpoint from path. A
// missing file is the zero T and no error: nothing has been learned yet. A file that
// cannot be used is the zero T and an *Ignored error. Any other error (a permission
// problem, say) is returned as it is.
//
// Load takes no lock: writers replace the file atomically, so it always reads one
// complete version.
func Load[T any](path, kind string, version int, endpoint string) (T, error) {
	v, _, err := load[T](path, kind, version, endpoint)
	return v, err
}

// load is Load that also says whether a usable file was there.
func load[T any](path, kind string, version int, endpoint string) (T, bool, error) {
	var zero T
	b, err := readLimited(path)
	if errors.Is(err, fs.ErrNotExist) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, err
	}
	v, err := decode[T](path, b, kind, version, endpoint)
	return v, err == nil, err
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading state file %s: %w", path, err)
	}
	return b, nil
}

func decode[T any](path string, b []byte, kind string, version int, endpoint string) (T, error) {
	var zero T
	ignored := func(err error, format string, args ...any) (T, error) {
		return zero, &Ignored{Path: path, Problem: fmt.Sprintf(format, args...), Err: err}
	}
	if len(b) > MaxSize {
		return ignored(nil, "larger than %d MiB", MaxSize>>20)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return ignored(nil, "empty")
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return ignored(err, "not valid JSON (%v)", err)
	}
	switch want := NormalizeEndpoint(endpoint); {
	case env.Kind != kind:
		return ignored(nil, "holds %q state, not %q", env.Kind, kind)
	case env.Version != version:
		return ignored(nil, "is version %d of the %s format, this cosmosctl reads version %d", env.Version, kind, version)
	case NormalizeEndpoint(env.Endpoint) != want:
		return ignored(nil, "was written for account %s, not %s", env.Endpoint, want)
	case len(env.Data) == 0:
		return ignored(nil, "has no data")
	}
	var v T
	if err := json.Unmarshal(env.Data, &v); err != nil {
		return ignored(err, "data does not match the %s format (%v)", kind, err)
	}
	return v, nil
}

// Update changes the state in path under an exclusive lock that other processes (and
// other goroutines) respect: it loads what is there, calls fn with it, and replaces the
// file with what fn returns. loaded is false when there was no usable file (missing, or
// one Load would ignore), and cur is then the zero T. If fn returns an error the file is
// left as it was and Update returns that error.
//
// The lock is a file next to the state, path + ".lock", which stays in place (removing
// it would let two processes each lock a different file). Update waits up to 2 s for it
// and then fails with an error naming the lock file, so that a stuck process costs a
// command its saved state, never its run. The directory is created (0700) if needed; the
// file is written 0600, through a temporary file, fsync and rename.
func Update[T any](path, kind string, version int, endpoint string, fn func(cur T, loaded bool) (T, error)) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	unlock, err := lock(path+".lock", lockWait)
	if err != nil {
		return err
	}
	defer unlock()

	cur, loaded, err := load[T](path, kind, version, endpoint)
	if err != nil && !errors.As(err, new(*Ignored)) {
		return err
	}
	next, err := fn(cur, loaded)
	if err != nil {
		return err
	}
	data, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("encoding %s state: %w", kind, err)
	}
	b, err := json.MarshalIndent(envelope{
		Kind:      kind,
		Version:   version,
		Endpoint:  NormalizeEndpoint(endpoint),
		WrittenAt: time.Now().UTC(),
		Data:      data,
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s state: %w", kind, err)
	}
	return writeAtomic(path, append(b, '\n'))
}

// WriteFile replaces the file at path with b (mode 0600) as Update does, without the
// envelope or the lock: a reader sees the old content or the new, never half of one,
// and a crash leaves one of them too. It is for files with a single writer at a time,
// which decides that by a lock of its own.
func WriteFile(path string, b []byte) error { return writeAtomic(path, b) }

// writeAtomic replaces path with b so that a reader sees the old content or the new,
// and a crash leaves one of them too.
func writeAtomic(path string, b []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// CreateTemp makes the file 0600; the leading dot keeps it out of casual listings.
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing state file %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(b); err != nil {
		return fmt.Errorf("writing state file %s: %w", path, err)
	}
	if err = f.Chmod(0o600); err != nil && !isUnsupported(err) {
		return fmt.Errorf("writing state file %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing state file %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing state file %s: %w", path, err)
	}
	if err = replace(tmp, path); err != nil {
		return fmt.Errorf("writing state file %s: %w", path, err)
	}
	// Make the rename itself durable. Best effort: the new file is in place either way,
	// and some file systems (and Windows) refuse to sync a directory.
	syncDir(dir)
	return nil
}

func isUnsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
