package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// The emulator the benchmarks share runs in a child process: this test binary again,
// told so by childEmulatorEnv. It prints its endpoint and key as one JSON line and
// serves until its stdin closes (the parent is done, or gone).

const childEmulatorEnv = "COSMOSCTL_BENCH_EMULATOR_CHILD"

type childAddress struct {
	Endpoint string `json:"endpoint"`
	Key      string `json:"key"`
}

// runChildEmulator is the child's main: the exit code.
func runChildEmulator() int {
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: database,
		Containers: []emulator.ContainerConfig{{ID: readContainer, PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench emulator:", err)
		return 1
	}
	defer srv.Close()
	if err := json.NewEncoder(os.Stdout).Encode(childAddress{Endpoint: srv.Endpoint(), Key: srv.Key()}); err != nil {
		return 1
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// childEmulator is the parent's handle on the child; or, with
// COSMOSCTL_BENCH_EMULATOR=inprocess (as the issue first had it), on an emulator in this
// process (srv), whose CPU time is then this process's own.
type childEmulator struct {
	endpoint, key string
	cmd           *exec.Cmd
	stdin         io.WriteCloser
	srv           *emulator.Server
}

// emulatorModeEnv is COSMOSCTL_BENCH_EMULATOR as the process started (the benchmarks
// clear the COSMOSCTL_ variables for the commands they run).
var emulatorModeEnv = os.Getenv("COSMOSCTL_BENCH_EMULATOR")

func startChildEmulator() (*childEmulator, error) {
	switch emulatorModeEnv {
	case "", "process":
	case "inprocess":
		srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: database,
			Containers: []emulator.ContainerConfig{{ID: readContainer, PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
		if err != nil {
			return nil, err
		}
		return &childEmulator{endpoint: srv.Endpoint(), key: srv.Key(), srv: srv}, nil
	default:
		return nil, fmt.Errorf("COSMOSCTL_BENCH_EMULATOR=%q: want process (the default) or inprocess", emulatorModeEnv)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), childEmulatorEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &childEmulator{cmd: cmd, stdin: stdin}
	line := make(chan []byte, 1)
	go func() {
		b, _ := bufio.NewReader(stdout).ReadBytes('\n')
		line <- b
		io.Copy(io.Discard, stdout)
	}()
	var addr childAddress
	select {
	case b := <-line:
		if err := json.Unmarshal(b, &addr); err != nil || addr.Endpoint == "" {
			c.stop()
			return nil, fmt.Errorf("the emulator process announced %q: %v", b, err)
		}
	case <-time.After(time.Minute):
		c.stop()
		return nil, fmt.Errorf("the emulator process did not announce its endpoint within a minute")
	}
	c.endpoint, c.key = addr.Endpoint, addr.Key
	return c, nil
}

// stop ends the child and waits for it.
func (c *childEmulator) stop() {
	if c.srv != nil {
		c.srv.Close()
		return
	}
	c.stdin.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// cpuTime is the child's CPU time so far (processCPU, per platform); 0 in process, where
// this process's own CPU time has it.
func (c *childEmulator) cpuTime() time.Duration {
	if c.srv != nil {
		return 0
	}
	return processCPU(c.cmd.Process.Pid)
}
