package cmd

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/cosmosctl/cosmosctl/bulk"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/export"
	"github.com/cosmosctl/cosmosctl/internal/progress"
	"github.com/cosmosctl/cosmosctl/output"
)

// Exit codes are an API: runbook scripts branch on them. They are decided here and
// nowhere else, and listed by `cosmosctl help exit-codes`.
const (
	ExitOK              = 0
	ExitError           = 1  // anything not listed below
	ExitUsage           = 2  // bad flags, arguments, input files or configuration
	ExitNotFound        = 3  // 404: the item, container or database does not exist
	ExitConflict        = 4  // 409 conflict or 412 precondition failed
	ExitThrottled       = 5  // 429 after retries
	ExitTimeout         = 6  // end-to-end timeout or 408
	ExitAuth            = 7  // 401, 403 other than a write-region change, or no Azure AD token
	ExitUnavailable     = 8  // 503, region down, network failure
	ExitThresholdBreach = 10 // the run completed and a --fail-on threshold was breached
	ExitPartial         = 11 // import completed, but some lines were rejected or failed; skew's report is partial
	// Interrupted and terminated are 128 + the signal's number, what a shell reports for
	// a process the signal killed, so that `$? -eq 130` means Ctrl-C either way.
	ExitInterrupted = 130 // SIGINT (Ctrl-C)
	ExitTerminated  = 143 // SIGTERM
)

var exitCodeHelp = []struct {
	code int
	text string
}{
	{ExitOK, "success"},
	{ExitError, "any other error; for hedge-test, also a --plot chart that could not be written at the end, its results being printed in full first"},
	{ExitUsage, "usage error: bad flags or arguments, unreadable or malformed input (a query the service answers 400, a query plan feature cosmosctl does not run across partitions, a continuation token of another query), bad configuration (a missing key, a missing or empty token file), a --jq expression that does not compile (nothing is sent) or fails on the command's JSON (after what it printed)"},
	{ExitNotFound, "not found (404): the item, container or database does not exist"},
	{ExitConflict, "conflict (409) or precondition failed (412)"},
	{ExitThrottled, "throttled (429) after retries"},
	{ExitTimeout, "timed out: the end-to-end timeout expired, or the service answered 408; query: a page's --e2e-timeout or the query's --timeout, after it printed what it read and the continuation"},
	{ExitAuth, "authentication or authorisation failed: the account answered 401 or 403, or no Azure AD token could be had (not logged in, a refused secret, an expired token file)"},
	{ExitUnavailable, "service unavailable: 503, a region refusing connections, or a network failure; or the embedded emulator's data held by a process that does not serve it; import: writes kept failing and it stopped (resume with the same command)"},
	{ExitThresholdBreach, "a --fail-on threshold was breached (probe): the breaches are listed on stderr; or changes lag --fail-on-stuck found a stuck lease, after printing its report"},
	{ExitPartial, "import completed but some lines were rejected or failed: the report counts them, the rejected-lines file holds them; skew: the report is partial (the statistics, the offer or some sampled requests failed), printed first, its notes saying what is missing; export merge: some shards are missing or not complete (nothing is written; stderr names them: run or resume them, then merge again)"},
	{ExitInterrupted, "interrupted (Ctrl-C, SIGINT): stderr says what was in flight, and where; probe prints its table first, query what it read and the continuation to resume from. A second Ctrl-C ends cosmosctl at once"},
	{ExitTerminated, "terminated (SIGTERM), as for 130"},
}

// PartialError is an import that completed with some lines rejected (bad lines) or
// failed (writes the service refused).
type PartialError struct {
	Rejected, Lines int64
	File            string
}

func (e *PartialError) Error() string {
	verb, pronoun := "were", "they are"
	if e.Rejected == 1 {
		verb, pronoun = "was", "it is"
	}
	return fmt.Sprintf("the import completed, but %s of its %s %s rejected or failed: %s in %s", progress.Thousands(e.Rejected), output.HumanCountThousands(e.Lines, "line"), verb, pronoun, e.File)
}

// UsageError is bad input from the user: flags, arguments, files, configuration.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// AuthError is a credential that could not authenticate before any request was sent:
// no Azure AD token could be had. A 401 or 403 from the account is a cosmos.Error.
type AuthError struct{ Err error }

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() error { return e.Err }

// ThresholdBreachError is a run that completed and breached --fail-on thresholds.
type ThresholdBreachError struct{ Breaches int }

func (e *ThresholdBreachError) Error() string {
	if e.Breaches == 1 {
		return "1 --fail-on threshold breached"
	}
	return fmt.Sprintf("%d --fail-on thresholds breached", e.Breaches)
}

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ie *InterruptedError
	switch {
	case errors.As(err, &ie) && ie.Signal == syscall.SIGTERM:
		return ExitTerminated
	case errors.Is(err, errInterrupted):
		return ExitInterrupted
	}
	var ue *UsageError
	var je *jqError
	if errors.As(err, &ue) || errors.As(err, &je) {
		return ExitUsage
	}
	var tb *ThresholdBreachError
	if errors.As(err, &tb) {
		return ExitThresholdBreach
	}
	var pe *PartialError
	var sp *skewPartialError
	var mi *export.IncompleteError
	if errors.As(err, &pe) || errors.As(err, &sp) || errors.As(err, &mi) {
		return ExitPartial
	}
	var bu *bulk.UnavailableError
	if errors.As(err, &bu) {
		return ExitUnavailable
	}
	var ae *AuthError
	if errors.As(err, &ae) {
		return ExitAuth
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ExitTimeout
	}
	if status, sub, ok := cosmos.Status(err); ok {
		switch {
		case status == 404:
			return ExitNotFound
		case status == 409 || status == 412:
			return ExitConflict
		case status == 429:
			return ExitThrottled
		case status == 408:
			return ExitTimeout
		case status == 401 || (status == 403 && sub != cosmos.SubWriteForbidden):
			return ExitAuth
		case status == 503 || status == 410 || status == 449 || (status == 403 && sub == cosmos.SubWriteForbidden):
			return ExitUnavailable
		case status == 400 || status == 413:
			return ExitUsage
		}
		return ExitError
	}
	var ne *cosmos.NetworkError
	var eu *embeddedUnavailableError
	var nu *emulatorNotUpError
	if errors.As(err, &ne) || errors.As(err, &eu) || errors.As(err, &nu) {
		return ExitUnavailable
	}
	return ExitError
}
