//go:build unix

package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestKeyFileThatIsAFIFOIsRefusedWithoutHanging(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"emulator", "--port", "0"},
		{"emulator", "status"},
		{"config", "show"},
	} {
		type result struct {
			code int
			msg  string
		}
		done := make(chan result, 1)
		go func() {
			io, _, errOut := testIO()
			code := Run(context.Background(), io, append(args, "--key-file", fifo))
			done <- result{code, strings.TrimSpace(errOut.String())}
		}()
		select {
		case r := <-done:
			if r.code != ExitUsage || strings.Contains(r.msg, "\n") || !strings.Contains(r.msg, fifo+": it is a named pipe (FIFO), not a regular file") && !strings.Contains(r.msg, fifo+" (--key-file): it is a named pipe (FIFO), not a regular file") {
				t.Fatalf("%v --key-file FIFO → exit %d, stderr %q; want a one-line usage error", args, r.code, r.msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v --key-file FIFO hung (no writer ever comes)", args)
		}
	}
}
