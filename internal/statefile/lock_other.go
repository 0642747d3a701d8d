//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos || windows)

package statefile

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// staleLock is how old a lock of this fallback may be before it is taken to belong
// to a process that died: with no OS lock to release it, the file stays behind.
const staleLock = 30 * time.Second

// tryLock is the portable fallback for systems without flock (Solaris, AIX, Plan 9,
// WebAssembly): the lock is held by whoever created path + ".excl" exclusively.
func tryLock(path string) (unlock func(), ok bool, err error) {
	excl := path + ".excl"
	f, err := os.OpenFile(excl, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if fi, statErr := os.Stat(excl); statErr == nil && time.Since(fi.ModTime()) > staleLock {
			os.Remove(excl)
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	f.Close()
	return func() { os.Remove(excl) }, true, nil
}

func replace(from, to string) error { return os.Rename(from, to) }

func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
