package cmd

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// TestBinaryAgainstASeparateEmulatorProcess is the operator's path: `cosmosctl emulator`
// in one process, item commands as separate processes against it.
func TestBinaryAgainstASeparateEmulatorProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := cosmosctlBinary(t)
	isolate(t)
	emu := exec.Command(bin, "emulator", "--port", "0", "-o", "json")
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
		Endpoint string               `json:"endpoint"`
		Key      string               `json:"key"`
		Regions  []emulatorRegionJSON `json:"regions"`
	}
	if err := json.Unmarshal([]byte(line), &printed); err != nil {
		t.Fatalf("emulator printed %q: %v", line, err)
	}
	env := append(os.Environ(), "COSMOSCTL_ENDPOINT="+printed.Endpoint, "COSMOSCTL_KEY="+printed.Key)
	run := func(stdin string, args ...string) (int, string, string) {
		return runBinary(t, bin, env, stdin, args...)
	}
	if code, _, errOut := run(`{"id":"p1","pk":"proc"}`, "create", "-f", "-", "--database", "app", "--container", "items"); code != 0 {
		t.Fatalf("create → %d: %s", code, errOut)
	}
	code, out, errOut := run("", "read", "p1", "--pk", "proc", "--database", "app", "--container", "items", "--region", "North Europe", "-o", "json")
	if code != 0 {
		t.Fatalf("read → %d: %s", code, errOut)
	}
	var res struct {
		Diagnostics struct {
			WinningRegion string `json:"winning_region"`
		}
	}
	_ = json.Unmarshal([]byte(out), &res)
	if res.Diagnostics.WinningRegion != "North Europe" {
		t.Fatalf("read answered from %q: %s", res.Diagnostics.WinningRegion, out)
	}
	if strings.Contains(errOut, "embedded emulator") {
		t.Fatal("with an endpoint configured no embedded emulator may start")
	}
	if code, _, _ := run("", "read", "missing", "--pk", "proc", "--database", "app", "--container", "items"); code != ExitNotFound {
		t.Fatalf("missing item → exit %d, want %d", code, ExitNotFound)
	}
}

// BenchmarkReadInvocation is one whole `cosmosctl read` as an operator or a runbook
// script runs it: process start, settings, account topology, the read, output, exit —
// against an emulator already running (with no injected latency).
func BenchmarkReadInvocation(b *testing.B) {
	bin := cosmosctlBinary(b)
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	env := append(os.Environ(), "COSMOSCTL_ENDPOINT="+srv.Endpoint(), "COSMOSCTL_KEY="+srv.Key(),
		"COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items", "COSMOSCTL_CONFIG="+filepath.Join(b.TempDir(), "none.toml"))
	create := exec.Command(bin, "create", "-f", "-")
	create.Env, create.Stdin = env, strings.NewReader(`{"id":"bench","pk":"b","payload":"`+strings.Repeat("x", 900)+`"}`)
	if out, err := create.CombinedOutput(); err != nil {
		b.Fatalf("create: %v %s", err, out)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "read", "bench", "--pk", "b")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("read: %v %s", err, out)
		}
	}
}
