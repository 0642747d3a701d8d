package acceptance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// isolatedEnv is the environment of the processes a test runs: the test's own, with a
// scratch home, cache and state directory and no profile, so that nothing the machine
// has configured (or remembered) reaches them.
func isolatedEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COSMOSCTL_") {
			env = append(env, kv)
		}
	}
	return append(env, append([]string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "COSMOSCTL_STATE_DIR=" + filepath.Join(home, "state"),
		"COSMOSCTL_CONFIG=" + filepath.Join(home, "none.toml")}, extra...)...)
}

// runBinary runs the binary to its end and returns its exit code, stdout and stderr.
func runBinary(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// emulatorProcess runs `cosmosctl emulator ARGS` as a process of its own, which
// outlives the processes the test kills, and returns its global endpoint. It is stopped
// (SIGINT) when the test ends.
func emulatorProcess(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	emu := exec.Command(bin, append([]string{"emulator", "--port", "0", "-o", "json"}, args...)...)
	emu.Env = env
	stdout, err := emu.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		emu.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- emu.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			emu.Process.Kill()
			t.Error("emulator did not stop on interrupt within 10 s")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the emulator's endpoint: %v", err)
	}
	var printed struct {
		Endpoint string `json:"endpoint"`
	}
	if err := json.Unmarshal([]byte(line), &printed); err != nil {
		t.Fatalf("emulator printed %q: %v", line, err)
	}
	return printed.Endpoint
}
