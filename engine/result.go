package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

var contextDeadline = context.DeadlineExceeded

// Result is the outcome of an operation: the winning response (if any) and the
// diagnostics of every attempt. Execute returns a Result even when it returns an error,
// so that a failed operation still shows what was tried.
type Result struct {
	StatusCode   int
	SubStatus    int
	Body         []byte
	ETag         string
	SessionToken string
	ActivityID   string
	// RequestCharge of the winning attempt; Diagnostics.RequestCharge is the total.
	RequestCharge float64
	// Continuation is the winning answer's x-ms-continuation (OpQuery): where the next
	// page starts, "" after the last page.
	Continuation string
	// QueryMetrics, IndexUtilization and QueryAdvice are the winning answer's
	// x-ms-documentdb-query-metrics, x-ms-cosmos-index-utilization and
	// x-ms-cosmos-query-advice, as sent (an OpQuery with Explain; "" when absent).
	QueryMetrics, IndexUtilization, QueryAdvice string
	Diagnostics                                 *Diagnostics
}

// TimeoutError is an operation that ran out of its end-to-end timeout. It wraps
// context.DeadlineExceeded and reports itself as 408/20008, as the Java SDK does.
type TimeoutError struct {
	Timeout time.Duration
	Cause   error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("end-to-end timeout of %s expired (408/%d); raise --e2e-timeout or check the diagnostics for the slow region", e.Timeout, cosmos.SubClientE2ETimeout)
}

func (e *TimeoutError) Unwrap() error { return contextDeadline }
