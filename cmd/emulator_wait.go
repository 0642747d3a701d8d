package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// waitForEmulator asks a running emulator for its state until it answers or wait has
// passed: the readiness probe of a script that has just started `cosmosctl emulator &`
// (status --wait), so that the script needs no sleep. An emulator not yet listening
// refuses the connection; any answer at all, a refusal of the key included, means it
// is up, and is returned as it is.
func waitForEmulator(ctx context.Context, cl *emulator.ControlClient, wait time.Duration) (emulator.State, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	pause := 20 * time.Millisecond
	for {
		try, cancelTry := context.WithTimeout(ctx, time.Second)
		st, err := cl.State(try)
		cancelTry()
		if _, _, answered := cosmos.Status(err); err == nil || answered {
			return st, err
		}
		if untrustedCertificate(err) {
			return st, withTrustHint(err) // a TLS emulator is up; asking again will not trust it
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				last := err
				var ne *cosmos.NetworkError
				if errors.As(err, &ne) {
					last = ne.Err
				}
				return st, &emulatorNotUpError{endpoint: cl.Endpoint, wait: wait, last: last}
			}
			return st, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 250*time.Millisecond)
	}
}

// emulatorNotUpError is an emulator that did not answer within status --wait: a
// network failure, exit 8.
type emulatorNotUpError struct {
	endpoint string
	wait     time.Duration
	last     error
}

func (e *emulatorNotUpError) Error() string {
	return fmt.Sprintf("no emulator answered at %s within --wait %s (the last try: %v): is `cosmosctl emulator` running there, on that port?", e.endpoint, e.wait, e.last)
}
