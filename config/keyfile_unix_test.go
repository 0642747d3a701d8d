//go:build unix

package config

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestKeyFileThatIsAFIFOIsRefusedWithoutBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := ReadSecretFile(path)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe (FIFO), not a regular file") {
			t.Fatalf("error %v, want a named pipe refused", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO key file blocked (no writer ever comes)")
	}
	flag := path
	if _, err := Resolve(filepath.Join(t.TempDir(), "none.toml"), Flags{KeyFile: &flag}, nil); err == nil || !strings.Contains(err.Error(), "cannot read key file "+path+" (--key-file): it is a named pipe") {
		t.Fatalf("Resolve with a FIFO --key-file: %v", err)
	}
}
