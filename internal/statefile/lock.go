package statefile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
)

// ErrLocked is wrapped by the error Update returns when another process holds the
// state file's lock for longer than Update waits.
var ErrLocked = errors.New("state file is locked by another process")

// lockWait bounds the wait for a state file's lock. A read-modify-write of a state file
// takes milliseconds; a lock held for seconds belongs to a stuck process, and a command
// is better off not saving its state than hanging behind it. Tests shorten it.
var lockWait = 2 * time.Second

// lock takes the exclusive lock on the lock file at path, creating it, and returns the
// function that releases it. The OS releases it too when the process dies, so a
// crashed cosmosctl never leaves a state file locked (except with the fallback of
// lock_other.go, which then breaks locks older than staleLock).
func lock(path string, wait time.Duration) (unlock func(), err error) {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		unlock, ok, err := tryLock(path)
		if err != nil {
			return nil, fmt.Errorf("locking state file: %w", err)
		}
		if ok {
			return unlock, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%w: %s is still held after %s", ErrLocked, path, wait)
		}
		// Polling, with jitter so that waiters do not wake in step; a blocking lock
		// call could not be given a deadline.
		time.Sleep(min(left, pause/2+rand.N(pause)))
		pause = min(2*pause, 20*time.Millisecond)
	}
}

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
