package gosuite

import "testing"

func TestJudgeReadsTheOutcomeAndTheReasonFromVerboseOutput(t *testing.T) {
	cases := []struct {
		name, output string
		outcome      outcome
		reason       string
	}{
		{"a pass has no reason", "=== RUN   TestX\n--- PASS: TestX (0.01s)\nPASS\n", passed, ""},
		{"a failure's reason is the first line that reads as one, not the logs before it",
			"=== RUN   TestX\n    x_test.go:10: Change Feed Response:\n    x_test.go:12: Expected ResourceID , got Aw==\n--- FAIL: TestX (0.01s)\n",
			failed, "x_test.go:12: Expected ResourceID , got Aw=="},
		{"testify's reason is its Error line",
			"=== RUN   TestX\n    x_test.go:7: \n        \tError Trace:\t/tmp/x_test.go:7\n        \tError:      \tNot equal: \n        \t            \texpected: 5\n        \tTest:       \tTestX\n--- FAIL: TestX (0.01s)\n",
			failed, "x_test.go:7: Not equal: expected: 5"},
		{"an azcore error keeps its status and code",
			"=== RUN   TestX\n    x_test.go:9: Failed to update container: PUT https://127.0.0.1:8082/dbs/d/colls/c\n        --------\n        RESPONSE 405: 405 Method Not Allowed\n        ERROR CODE: 405 Method Not Allowed\n--- FAIL: TestX (0.01s)\n",
			failed, "x_test.go:9: Failed to update container: PUT https://127.0.0.1:8082/dbs/d/colls/c | RESPONSE 405: 405 Method Not Allowed | ERROR CODE: 405 Method Not Allowed"},
		{"a skip's reason is its message",
			"=== RUN   TestX\n    emulator_test.go:39: set EMULATOR environment variable to run this test\n--- SKIP: TestX (0.00s)\n",
			skipped, "emulator_test.go:39: set EMULATOR environment variable to run this test"},
		{"a timeout is the panic",
			"=== RUN   TestX\npanic: test timed out after 2m0s\n\trunning tests:\n\t\tTestX (2m0s)\n",
			failed, "panic: test timed out after 2m0s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, reason := judge("TestX", c.output)
			if got != c.outcome || reason != c.reason {
				t.Errorf("judge = %s, %q; want %s, %q", got, reason, c.outcome, c.reason)
			}
		})
	}
}
