package data_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

var pollLine = regexp.MustCompile(`poll range \S+: 200, (\d+) changes?`)

func TestChangesPageSizeIsLargeForACatchUpAndSmallForAFewItems(t *testing.T) {
	items := testkit.QueryItems(1200) // ≈ 300 in each of the 4 ranges
	testkit.QueryAccount(t, items)
	// largestPoll runs changes --diagnostics and returns the most changes one poll
	// brought, and the lines on stdout.
	largestPoll := func(t *testing.T, args ...string) (int, int) {
		t.Helper()
		r := clitest.Run(t, "", append([]string{"changes", "--diagnostics"}, args...)...)
		if r.Code != 0 {
			t.Fatalf("changes %v: exit %d: %s", args, r.Code, r.ErrOut)
		}
		most := 0
		for _, m := range pollLine.FindAllStringSubmatch(r.ErrOut, -1) {
			n, _ := strconv.Atoi(m[1])
			most = max(most, n)
		}
		return most, strings.Count(r.Out, "\n")
	}
	for _, tc := range []struct {
		name     string
		args     []string
		lines    int
		ok       func(most int) bool
		expected string
	}{
		{"a catch-up asks for pages of 1,000: a range's ≈ 300 changes in one poll", nil, len(items), func(m int) bool { return m > 100 }, "more than the service's 100"},
		{"an explicit --page-size wins", []string{"--page-size", "100"}, len(items), func(m int) bool { return m == 100 }, "100"},
		{"--max-items 5 asks for no more than 5", []string{"--max-items", "5"}, 5, func(m int) bool { return m > 0 && m <= 5 }, "1 to 5"},
		{"--max-items with --page-size: the flag wins", []string{"--max-items", "5", "--page-size", "3"}, 5, func(m int) bool { return m == 3 }, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			most, lines := largestPoll(t, tc.args...)
			if !tc.ok(most) || lines != tc.lines {
				t.Fatalf("the largest poll brought %d changes (want %s), %d lines on stdout (want %d)", most, tc.expected, lines, tc.lines)
			}
		})
	}
}
