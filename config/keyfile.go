package config

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
)

// MaxSecretFileBytes bounds what is read from a key file: an account key is 88
// characters, so a few KiB leave room for a trailing newline or a comment-free paste
// and still refuse a file (or /dev/zero) that would fill memory.
const MaxSecretFileBytes = 4 << 10

// ReadSecretFile reads a small file holding a secret. It must be a regular file: a FIFO
// would block the command until a writer came, a device such as /dev/zero never ends.
// The file is opened without blocking and its type checked on the open descriptor, so
// that swapping a pipe in after a check cannot hang the read. The error names no path
// (callers say which file and where its path came from) and never quotes the content;
// errors.Is(err, fs.ErrNotExist) tells a missing file.
func ReadSecretFile(path string) ([]byte, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, nil, unwrapPath(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, unwrapPath(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, fmt.Errorf("it is %s, not a regular file: give the path of a file that holds the key", describeFileType(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSecretFileBytes+1))
	if err != nil {
		return nil, fi, unwrapPath(err)
	}
	if len(data) > MaxSecretFileBytes {
		return nil, fi, fmt.Errorf("it is larger than %d KiB, and a key file holds the key alone", MaxSecretFileBytes>>10)
	}
	return data, fi, nil
}

// SecretFileWarning is the warning, as ssh gives it, for a key file that the group or
// other users can read; "" when only the owner can (or on Windows, whose permission bits
// say nothing about that).
func SecretFileWarning(path string, fi fs.FileInfo) string {
	if fi == nil || runtime.GOOS == "windows" || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("key file %s is readable by other users (permissions %04o are too open): run chmod 600 %s", path, fi.Mode().Perm(), path)
}

func describeFileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "of type " + m.Type().String()
	}
}
