package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// The emulator the benchmarks share runs in a child process: this test binary again,
// told so by childEmulatorEnv. It prints its endpoint and key as one JSON line and
// serves until its stdin closes (the parent is done, or gone). Each line "gc" on its
// stdin has it collect its garbage and answer "ok" on its stdout: before every
// measured run, so that no run pays for a collection of what the runs before it left
// (each collection scans every stored item; left to chance, which run it falls in made
// the emulator's share of a read vary by a third from run to run).

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
	// COSMOSCTL_BENCH_EMULATOR_CPUPROFILE=FILE profiles the emulator's side of the
	// runs (go tool pprof FILE), as -cpuprofile does the benchmark's.
	if path := os.Getenv("COSMOSCTL_BENCH_EMULATOR_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench emulator:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench emulator:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if err := json.NewEncoder(os.Stdout).Encode(childAddress{Endpoint: srv.Endpoint(), Key: srv.Key()}); err != nil {
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "gc" {
			runtime.GC()
			if _, err := os.Stdout.WriteString("ok\n"); err != nil {
				return 1
			}
		}
	}
	return 0
}

// childEmulator is the parent's handle on the child; or, with
// COSMOSCTL_BENCH_EMULATOR=inprocess (as the issue first had it), on an emulator in this
// process (srv), whose CPU time is then this process's own.
type childEmulator struct {
	endpoint, key string
	cmd           *exec.Cmd
	stdin         io.WriteCloser
	// answers has the child's lines after its address: its "ok"s.
	answers chan []byte
	srv     *emulator.Server
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
	c := &childEmulator{cmd: cmd, stdin: stdin, answers: make(chan []byte, 1)}
	go func() {
		defer close(c.answers)
		r := bufio.NewReader(stdout)
		for {
			b, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			c.answers <- b
		}
	}()
	var addr childAddress
	select {
	case b := <-c.answers:
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

// collect has the emulator collect its garbage, and waits until it has.
func (c *childEmulator) collect() error {
	if c.srv != nil {
		runtime.GC()
		return nil
	}
	if _, err := io.WriteString(c.stdin, "gc\n"); err != nil {
		return fmt.Errorf("asking the emulator process to collect: %w", err)
	}
	select {
	case b, ok := <-c.answers:
		if !ok || string(b) != "ok\n" {
			return fmt.Errorf("the emulator process answered %q to gc", b)
		}
		return nil
	case <-time.After(time.Minute):
		return fmt.Errorf("the emulator process did not collect within a minute")
	}
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
