package scripts_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// changes --follow ends when --duration or --until says, exiting 0 with the position of
// everything it printed saved, so that a runbook step that follows the feed ends, and
// the next step (or run) goes on from there.
func TestChangesFollowEndsAtItsDurationOrUntilWithThePositionSaved(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Account(t)
	env := os.Environ()
	feed := filepath.Join(t.TempDir(), "feed.json")
	upsert := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			if code, _, errOut := testkit.RunBinary(t, bin, env, fmt.Sprintf(`{"id":%q,"pk":"t1"}`, id), "upsert", "-f", "-"); code != 0 {
				t.Fatalf("upsert %s: exit %d: %s", id, code, errOut)
			}
		}
	}
	follow := func(stop ...string) (code int, ids []string, errOut string, took time.Duration) {
		t.Helper()
		start := time.Now()
		code, out, errOut := testkit.RunBinary(t, bin, env, "", append([]string{"changes", "--follow", "--poll-interval", "100ms", "--state", feed, "-o", "ndjson"}, stop...)...)
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l != "" {
				ids = append(ids, strings.SplitN(strings.TrimPrefix(l, `{"id":"`), `"`, 2)[0])
			}
		}
		return code, ids, errOut, time.Since(start)
	}

	upsert("a", "b", "c")
	code, ids, errOut, took := follow("--duration", "1500ms")
	if code != 0 || strings.Join(ids, ",") != "a,b,c" {
		t.Fatalf("--duration 1500ms: exit %d, printed %v: %s", code, ids, errOut)
	}
	// It followed until then (no earlier: it had caught up long before), and not for
	// long after (generous: a loaded machine).
	if took < 1500*time.Millisecond || took > 30*time.Second {
		t.Errorf("--duration 1500ms took %v", took)
	}
	if !strings.Contains(errOut, "stopped at the end of --duration 1.5s, after 3 changes; the position is saved in "+feed) {
		t.Errorf("stderr %q, want it to say why it stopped and where the position is", errOut)
	}

	// The next run goes on from the saved position: only what changed since.
	upsert("d", "e")
	until := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second).Add(time.Second)
	code, ids, errOut, took = follow("--until", until.Format(time.RFC3339))
	if code != 0 || strings.Join(ids, ",") != "d,e" {
		t.Fatalf("--until: exit %d, printed %v: %s", code, ids, errOut)
	}
	if now := time.Now(); now.Before(until) || took > 30*time.Second {
		t.Errorf("--until %s ended at %s, after %v", until.Format(time.RFC3339), now.UTC().Format(time.RFC3339Nano), took)
	}

	// Without --follow the command ends when it catches up, before the deadline.
	upsert("f")
	code, out, _ := testkit.RunBinary(t, bin, env, "", "changes", "--state", feed, "--duration", "1m")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"f"`) {
		t.Errorf("caught up under --duration 1m: exit %d, stdout %q", code, out)
	}

	// Bad input is refused before anything is read.
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--duration", "0s"}, "--duration must be more than 0"},
		{[]string{"--duration", "1m", "--until", until.Format(time.RFC3339)}, "give one"},
		{[]string{"--until", "2020-01-01T00:00:00Z"}, "--until 2020-01-01T00:00:00Z has passed"},
		{[]string{"--until", "18:00"}, "--until must be an RFC 3339 time"},
	} {
		code, _, errOut := testkit.RunBinary(t, bin, env, "", append([]string{"changes", "--follow"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.says)
		}
	}
}

// A feed that could not even be opened by the deadline is not an end the user asked
// for: the account never answered, and the command says so with the timeout's code.
func TestChangesWhoseFeedCannotBeOpenedByItsDurationExitsWithATimeout(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Isolate(t)
	// An endpoint that takes connections and never answers: a hung account.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	env := append(os.Environ(), "COSMOSCTL_ENDPOINT=http://"+ln.Addr().String(), "COSMOSCTL_KEY="+testkit.AccountKey,
		"COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items")
	start := time.Now()
	code, out, errOut := testkit.RunBinary(t, bin, env, "", "changes", "--follow", "--duration", "1s")
	if code != 6 || out != "" || !strings.Contains(errOut, "could not be opened before --duration 1s") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 6 and a line saying the feed could not be opened", code, out, errOut)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v", took)
	}
}
