//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package statefile

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes flock(2) on the lock file without blocking. flock belongs to the open
// file, so two goroutines of one process, each with its own open, exclude each other
// as two processes do.
func tryLock(path string) (unlock func(), ok bool, err error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, false, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, true, nil
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
