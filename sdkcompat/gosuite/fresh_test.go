package gosuite

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// The port the suite hard-codes: the global endpoint (https://localhost:8081/, in
// emulator_test.go), on which the scenario also serves its one region, as Microsoft's
// emulator does.
var suitePorts = []int{8081}

// endpoint is where the suite and the readiness probe reach the emulator, by the name
// the suite uses.
const endpoint = "https://localhost:8081"

// freshEmulator is one `cosmosctl emulator` in the Microsoft-shaped scenario, started for
// one test and stopped after it.
type freshEmulator struct {
	cmd      *exec.Cmd
	certFile string          // the PEM the suite trusts through SSL_CERT_FILE
	stderr   *testkit.Buffer // the emulator's log: panics and server errors
	done     chan error
}

// servedLine is the line `cosmosctl emulator -o json` prints once it serves, after the
// certificate is written: the first half of readiness.
type servedLine struct {
	Endpoint string  `json:"endpoint"`
	TLS      bool    `json:"tls"`
	CertFile *string `json:"tls_certificate_file"`
}

// portsTaken names the suite's ports something already listens on.
func portsTaken() []int {
	var taken []int
	for _, p := range suitePorts {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(p)))
		if err != nil {
			taken = append(taken, p)
			continue
		}
		ln.Close()
	}
	return taken
}

// startFresh starts the emulator with the scenario, writing its certificate into dir,
// and returns once it answers over https with that certificate trusted: the line it
// prints once serving (the certificate is written by then; `status --wait` alone could
// reach the listener before the file exists, and Go reads SSL_CERT_FILE once), then
// `cosmosctl emulator status --wait` as a client of the suite's kind would see it. No
// sleeps: both steps wait on the emulator's own signals, bounded by limit.
func startFresh(ctx context.Context, bin, scenario, dir string, env []string, limit time.Duration) (*freshEmulator, error) {
	certFile := filepath.Join(dir, "emulator.pem")
	cmd := exec.Command(bin, "emulator", "--scenario", scenario, "--tls-cert-out", certFile, "-o", "json")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	e := &freshEmulator{cmd: cmd, certFile: certFile, stderr: &testkit.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = e.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() {
		}
		e.done <- cmd.Wait()
	}()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	var line string
	select {
	case l, ok := <-lines:
		if !ok {
			err := <-e.done
			return nil, fmt.Errorf("the emulator exited before serving (%v): %s", err, lastLine(e.stderr.String()))
		}
		line = l
	case <-deadline.C:
		e.stop()
		return nil, fmt.Errorf("the emulator printed nothing within %v: %s", limit, lastLine(e.stderr.String()))
	case <-ctx.Done():
		e.stop()
		return nil, ctx.Err()
	}
	var served servedLine
	if err := json.Unmarshal([]byte(line), &served); err != nil || !served.TLS || served.CertFile == nil || *served.CertFile != certFile {
		e.stop()
		return nil, fmt.Errorf("the emulator did not serve https with its certificate in %s: %q", certFile, line)
	}
	waitCtx, cancel := context.WithTimeout(ctx, limit+10*time.Second)
	defer cancel()
	status := exec.CommandContext(waitCtx, bin, "emulator", "status", "--endpoint", endpoint, "--wait", limit.String(), "-o", "json")
	status.Env = append(env, "SSL_CERT_FILE="+certFile)
	if out, err := status.CombinedOutput(); err != nil {
		e.stop()
		return nil, fmt.Errorf("cosmosctl emulator status --wait: %v: %s", err, lastLine(string(out)))
	}
	return e, nil
}

// stop interrupts the emulator, as Ctrl-C would, and waits for it to exit (killing it
// if it has not within 10 s), so that the ports are free for the next test.
func (e *freshEmulator) stop() error {
	_ = e.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-e.done:
		return exitedOnInterrupt(err)
	case <-time.After(10 * time.Second):
		_ = e.cmd.Process.Kill()
		<-e.done
		return errors.New("the emulator did not stop within 10 s of an interrupt: killed")
	}
}

// exitedOnInterrupt accepts the exits an interrupted emulator may make.
func exitedOnInterrupt(err error) error {
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) && (ee.ExitCode() == 130 || !ee.Exited()) {
		return nil
	}
	return err
}

// lastLine is the last non-empty line of s, for a one-line reason.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
