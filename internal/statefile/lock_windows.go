//go:build windows

package statefile

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// LockFileEx and UnlockFileEx from kernel32, called through the standard library so
// that the module needs no golang.org/x/sys/windows for two functions.
var (
	kernel32         = syscall.NewLazyDLL("kernel32.dll")
	procLockFileEx   = kernel32.NewProc("LockFileEx")
	procUnlockFileEx = kernel32.NewProc("UnlockFileEx")
)

const (
	lockfileFailImmediately = 0x1
	lockfileExclusiveLock   = 0x2

	errorLockViolation syscall.Errno = 33
	errorAccessDenied  syscall.Errno = 5
	errorSharing       syscall.Errno = 32
)

// tryLock takes an exclusive LockFileEx lock on the first byte of the lock file,
// failing at once if another handle holds it.
func tryLock(path string) (unlock func(), ok bool, err error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, false, err
	}
	h := f.Fd()
	var ol syscall.Overlapped
	r, _, callErr := procLockFileEx.Call(h, lockfileExclusiveLock|lockfileFailImmediately, 0, 1, 0, uintptr(unsafe.Pointer(&ol)))
	if r == 0 {
		f.Close()
		if errors.Is(callErr, errorLockViolation) {
			return nil, false, nil
		}
		return nil, false, &os.PathError{Op: "LockFileEx", Path: path, Err: callErr}
	}
	return func() {
		var ol syscall.Overlapped
		procUnlockFileEx.Call(h, 0, 1, 0, uintptr(unsafe.Pointer(&ol)))
		f.Close()
	}, true, nil
}

// replace renames over the state file. On Windows that fails while another process
// has the old file open (a Load reading it, or an antivirus scanner), briefly; so it
// is tried again for a short while.
func replace(from, to string) error {
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		err := os.Rename(from, to)
		if err == nil || time.Now().After(deadline) ||
			!(errors.Is(err, errorAccessDenied) || errors.Is(err, errorSharing)) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// syncDir does nothing: Windows cannot open a directory for FlushFileBuffers through
// os.Open, and NTFS journals the rename.
func syncDir(string) {}
