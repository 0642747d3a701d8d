package cmd

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// `emulator status --wait` is a script's readiness probe: it keeps asking while nothing
// answers at the endpoint, and prints the emulator's status once it does.
func TestEmulatorStatusWaitAsksUntilTheEmulatorAnswers(t *testing.T) {
	isolate(t)
	// Something that takes connections and closes them, as a port with no server yet
	// refuses them: the probe's tries are counted, and the emulator replaces it only
	// after the probe has failed at least twice.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	tries := make(chan struct{}, 100)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
			tries <- struct{}{}
		}
	}()
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	done := make(chan runResult, 1)
	go func() { done <- cosmosctl(t, "", "emulator", "status", "--wait", "30s", "--endpoint", endpoint) }()
	for range 2 {
		select {
		case <-tries:
		case r := <-done:
			t.Fatalf("status --wait ended before the emulator was up: exit %d: %s", r.code, r.errOut)
		case <-time.After(10 * time.Second):
			t.Fatal("status --wait did not ask within 10 s")
		}
	}
	// The regions' ports are free ones held until now, not the ports after the global
	// endpoint's, which another connection may hold.
	cfg := emulator.Config{Port: port}
	var held []net.Listener
	for _, name := range emulator.DefaultRegions {
		rl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, rl)
		cfg.Regions = append(cfg.Regions, emulator.RegionConfig{Name: name, Port: rl.Addr().(*net.TCPAddr).Port})
	}
	l.Close()
	for _, rl := range held {
		rl.Close()
	}
	srv, err := emulator.Start(cfg, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	select {
	case r := <-done:
		if r.code != 0 || !strings.Contains(r.out, "endpoint            "+endpoint) {
			t.Fatalf("exit %d, stdout %q, stderr %q: want the status of the emulator that came up", r.code, r.out, r.errOut)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("status --wait did not see the emulator that came up")
	}
}

// Nothing coming up within --wait is a network failure, exit 8, that says where it
// asked and for how long.
func TestEmulatorStatusWaitGivesUpAfterItsWait(t *testing.T) {
	isolate(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	io, out, errOut := testIO()
	start := time.Now()
	code := Run(ctx, io, []string{"emulator", "status", "--wait", "300ms", "--endpoint", endpoint})
	if code != ExitUnavailable || out.String() != "" || !strings.Contains(errOut.String(), "no emulator answered at "+endpoint+" within --wait 300ms") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > 10*time.Second {
		t.Fatalf("gave up after %s, want about --wait 300ms", took)
	}
}
