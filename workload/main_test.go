package workload

import (
	"testing"

	"go.uber.org/goleak"
)

// Schedules start workers and timers; every test must leave none of them behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
