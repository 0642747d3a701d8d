package cmd

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the master to read what is written, the terminal for
// a child's stderr.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		t.Skipf("naming the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	return master, tty
}

// TestTheBinaryPrintsTheNoAccountNoticeOncePerTerminalSession runs the real binary with
// stderr on a terminal: in this test's session, and in sessions of their own.
func TestTheBinaryPrintsTheNoAccountNoticeOncePerTerminalSession(t *testing.T) {
	bin, _, _ := shareSetup(t)
	run := func(newSession bool) string {
		t.Helper()
		master, tty := openPTY(t)
		defer master.Close()
		cmd := exec.Command(bin, "read", "x", "--pk", "p")
		cmd.Env = os.Environ()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: newSession}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close() // the child has it; the master reads until the child lets go
		read := make(chan string, 1)
		go func() {
			var b bytes.Buffer
			_, err := io.Copy(&b, master)
			if err != nil && !errors.Is(err, syscall.EIO) { // EIO: no writer left
				b.WriteString("(reading the terminal: " + err.Error() + ")")
			}
			read <- b.String()
		}()
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitNotFound {
			t.Fatalf("read → %v, want exit %d", err, ExitNotFound)
		}
		return <-read
	}
	for _, step := range []struct {
		name       string
		newSession bool
		want       bool
	}{
		{"the first command in this session prints it", false, true},
		{"the second does not", false, false},
		{"a command in a new session prints it", true, true},
		{"and this session's next command still does not", false, false},
	} {
		got := run(step.newSession)
		if strings.Contains(got, noAccountNotice) != step.want {
			t.Errorf("%s: terminal shows %q", step.name, got)
		}
		if !strings.Contains(got, "Error:") {
			t.Errorf("%s: the error went elsewhere than the terminal: %q", step.name, got)
		}
	}
}
