package gosuite

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// outcome is what became of one test.
type outcome string

const (
	passed  outcome = "passed"
	failed  outcome = "failed"
	skipped outcome = "skipped" // by the suite itself (t.Skip)
	notRun  outcome = "not run" // the harness could not run it: no emulator, or no time left
)

// result is one test's outcome, the line that says why (the first failure, or the skip
// reason) and its output for the log.
type result struct {
	test
	outcome  outcome
	reason   string
	duration time.Duration
	output   string
}

// runOne runs one test of the compiled suite, by exact name, against the emulator that
// serves on the suite's ports, as `go test -run '^Name$' -v` would, bounded by limit
// (the binary's own -test.timeout panics with the goroutines a little earlier).
func runOne(ctx context.Context, s *suite, tc test, certFile string, limit time.Duration) result {
	ctx, cancel := context.WithTimeout(ctx, limit+30*time.Second)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, s.binary, "-test.run", "^"+tc.name+"$", "-test.v", "-test.count=1", "-test.timeout", limit.String())
	cmd.Dir = s.dir
	cmd.Env = append(append([]string{}, s.env...), "EMULATOR=1", "SSL_CERT_FILE="+certFile)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r := result{test: tc, duration: time.Since(start), output: out.String()}
	r.outcome, r.reason = judge(tc.name, r.output)
	if ctx.Err() != nil {
		r.outcome, r.reason = failed, fmt.Sprintf("killed: not done within %v", limit+30*time.Second)
	} else if r.outcome == passed && err != nil {
		r.outcome, r.reason = failed, fmt.Sprintf("reported PASS but exited with %v", err)
	}
	return r
}

// verdict is the line `go test -v` prints when a test ends.
var verdict = regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (\S+)`)

// logLine is a line a test logged: `    file_test.go:123: message`.
var logLine = regexp.MustCompile(`^\s+(\S+_test\.go:\d+):\s*(.*)$`)

// failureWords are what failure messages say.
var failureWords = regexp.MustCompile(`(?i)expected|fail|error|not equal|unexpected|should|mismatch|\bgot\b`)

// judge reads a test's outcome from its -v output, and the reason: for a failure the
// first line it logged (t.Error, t.Fatal, require), else the panic; for a skip the
// skip's message.
func judge(name, output string) (outcome, string) {
	lines := strings.Split(output, "\n")
	got := outcome("")
	for _, l := range lines {
		if m := verdict.FindStringSubmatch(l); m != nil && m[2] == name {
			got = map[string]outcome{"PASS": passed, "FAIL": failed, "SKIP": skipped}[m[1]]
		}
	}
	if got == passed {
		return passed, ""
	}
	// A test's t.Log lines come out like its t.Error lines; the first that reads as a
	// failure (or a skip) is the reason, else the first it logged.
	first := ""
	for i, l := range lines {
		if m := logLine.FindStringSubmatch(l); m != nil {
			reason := m[1] + ": " + explain(m[2], lines[i+1:])
			if first == "" {
				first = reason
			}
			if got == skipped || failureWords.MatchString(reason) {
				first = reason
				break
			}
		}
	}
	if first != "" {
		if got == "" {
			got = failed
		}
		return got, first
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "panic: ") {
			return failed, strings.TrimSpace(l)
		}
	}
	if got == "" {
		return failed, "no verdict in the output: " + lastLine(output)
	}
	return got, ""
}

// explain makes a logged message one line. testify puts what went wrong on an "Error:"
// line after "Error Trace:"; azcore's ResponseError spans lines, of which the status
// line, the error code and the service's message say what the emulator answered.
func explain(first string, rest []string) string {
	var more []string
	for _, l := range rest {
		if !strings.HasPrefix(l, "    ") {
			break // the next test-level line: the message has ended
		}
		more = append(more, strings.TrimSpace(l))
	}
	msg := strings.TrimSpace(first)
	if msg == "" || strings.HasPrefix(msg, "Error Trace:") {
		for i, l := range more {
			if strings.HasPrefix(l, "Error:") {
				msg = strings.TrimSpace(strings.TrimPrefix(l, "Error:"))
				if i+1 < len(more) && !strings.Contains(more[i+1], ":\t") {
					msg += " " + more[i+1]
				}
				break
			}
		}
	}
	for _, l := range more {
		switch {
		case strings.HasPrefix(l, "RESPONSE "), strings.HasPrefix(l, "ERROR CODE:"):
			msg += " | " + l
		case strings.HasPrefix(l, `"message":`), strings.HasPrefix(l, `"Message":`), strings.HasPrefix(l, `{"code":`):
			if len(l) > 240 {
				l = l[:240] + "…"
			}
			msg += " | " + l
		}
	}
	return msg
}
