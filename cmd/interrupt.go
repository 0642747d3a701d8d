package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cosmosctl/cosmosctl/engine"
)

// interruptContext is ended by the first SIGINT or SIGTERM, with a cause naming the
// signal, so that the exit code can be the shell's 128+signal. The first signal is
// all it takes over: a second Ctrl-C ends the process at once, as it would without
// cosmosctl's handling, for a command that does not stop soon enough.
func interruptContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(&signalCause{sig: s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

// signalCause is the cause of a context ended by a signal.
type signalCause struct{ sig os.Signal }

func (s *signalCause) Error() string { return s.sig.String() + " signal received" }

// Is makes errors.Is(cause, context.Canceled) hold, as for signal.NotifyContext.
func (s *signalCause) Is(target error) bool { return target == context.Canceled }

// InterruptedError is a command that a signal stopped (or whose context was cancelled)
// before it finished: what it was doing, and the regions with requests in flight.
type InterruptedError struct {
	// Signal is SIGINT or SIGTERM; a context cancelled otherwise counts as SIGINT.
	// Run fills it in (and What, when the command did not) from its context.
	Signal os.Signal
	// What is the command or operation, e.g. `read "o1"` or `cosmosctl probe`.
	What string
	// InFlight are the regions whose requests had no answer when it stopped.
	InFlight []string
}

func (e *InterruptedError) Error() string {
	verb := "interrupted"
	if e.Signal == syscall.SIGTERM {
		verb = "terminated"
	}
	msg := verb + ": " + e.What
	if len(e.InFlight) > 0 {
		msg += " in flight in " + strings.Join(e.InFlight, ", ")
	}
	return msg
}

// Is lets callers (and ExitCode) treat it as the sentinel errInterrupted.
func (e *InterruptedError) Is(target error) bool { return target == errInterrupted }

// interruption is err as an *InterruptedError when ctx was cancelled (Ctrl-C) and err
// is what came of it; nil when it was not. A --fail-on breach stays what it is: the
// run's finding, not its interruption. what names the command.
func interruption(ctx context.Context, err error, what string) *InterruptedError {
	var ie *InterruptedError
	if errors.As(err, &ie) {
		if ie.What == "" {
			ie.What = what
		}
		if ie.Signal == nil {
			ie.Signal = signalOf(ctx)
		}
		return ie
	}
	if err == nil || !errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	var tb *ThresholdBreachError
	if errors.As(err, &tb) {
		return nil
	}
	return &InterruptedError{Signal: signalOf(ctx), What: what}
}

func signalOf(ctx context.Context) os.Signal {
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.sig
	}
	return os.Interrupt
}

// interruptedDuring is an item command's error when it was interrupted (the engine
// returns the context's error): it names the operation and the regions it was waiting on, from the diagnostics, instead of
// "context canceled". Other errors are returned as they are.
func interruptedDuring(res *engine.Result, err error) error {
	if !errors.Is(err, context.Canceled) {
		return err
	}
	ie := &InterruptedError{}
	if res != nil && res.Diagnostics != nil {
		d := res.Diagnostics
		ie.What = string(d.Operation)
		if d.ID != "" {
			ie.What += fmt.Sprintf(" %q", d.ID)
		}
		seen := map[string]bool{}
		for _, a := range d.Attempts {
			if a.StatusCode == 0 && !seen[a.Region] && (a.Outcome == engine.OutcomeCancelled || a.Outcome == engine.OutcomeInFlight) {
				seen[a.Region] = true
				ie.InFlight = append(ie.InFlight, a.Region)
			}
		}
	}
	return ie
}
