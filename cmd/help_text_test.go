package cmd

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/retries"
)

func commandHelp(t *testing.T, args ...string) string {
	t.Helper()
	isolate(t)
	r := cosmosctl(t, "", append(args, "--help")...)
	if r.code != 0 {
		t.Fatalf("%s --help: exit %d: %s", args, r.code, r.errOut)
	}
	return r.out
}

// joinedText joins wrapped text and drops markdown's backticks, so that the help's and
// the README's wording compare.
func joinedText(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ")
}

// readmeFailoverBullet is the README's paragraph on when reads fail over.
func readmeFailoverBullet(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\n- A read that gets no final answer fails over.*?\n(?:-|\n)`).FindString(string(data))
	if m == "" {
		t.Fatal("the README has no bullet starting \"- A read that gets no final answer fails over\"")
	}
	return joinedText(m)
}

// What `read --help` and the README say about failover is what retries.Policy decides:
// each trigger they name moves a read on, and each final answer they name ends it.
func TestReadHelpAndTheReadmeAgreeOnFailoverWithThePolicy(t *testing.T) {
	help := joinedText(commandHelp(t, "read"))
	readme := readmeFailoverBullet(t)
	named := []string{
		"503", "500", "408", "410", "449", "404/1002", "any other answer that is not final", "attempt timeout",
		"network error", "429", "retry-after", "9 times and 30 s", "1000, 1002, 1007, 1008", "twice", "403/3 or 403/1008",
		"below 400", "400, 401, 404/0, 405, 409, 412, 413", "403 with any other substatus", "5301",
	}
	for _, s := range named {
		if !strings.Contains(help, s) {
			t.Errorf("read --help does not say %q", s)
		}
		if !strings.Contains(readme, s) {
			t.Errorf("the README's failover bullet does not say %q", s)
		}
	}
	if strings.Contains(help, "failing over to the next on 503, 408 or a network error") {
		t.Error("read --help still has the old, short list")
	}

	p := retries.DefaultPolicy()
	read := retries.Request{Region: "East US", CanFailOver: true}
	decide := func(o retries.Outcome) retries.Action {
		var st retries.State
		return p.Decide(&st, read, o).Action
	}
	for _, o := range []retries.Outcome{
		{StatusCode: 503}, {StatusCode: 500}, {StatusCode: 408}, {StatusCode: 410}, {StatusCode: 449},
		{StatusCode: 404, SubStatus: 1002}, {StatusCode: 502}, {StatusCode: 504},
		{TimedOut: true, Sent: true, Timeout: 6 * time.Second}, {Sent: true}, {Sent: false},
	} {
		if got := decide(o); got != retries.NextRegion {
			t.Errorf("a read after %+v: %s, but the help says it fails over", o, got)
		}
	}
	for _, o := range []retries.Outcome{
		{StatusCode: 200}, {StatusCode: 304}, {StatusCode: 400}, {StatusCode: 401}, {StatusCode: 404}, {StatusCode: 405},
		{StatusCode: 409}, {StatusCode: 412}, {StatusCode: 413}, {StatusCode: 403, SubStatus: 5301}, {StatusCode: 403},
	} {
		if got := decide(o); got != retries.Stop {
			t.Errorf("a read after %d/%d: %s, but the help says it is final", o.StatusCode, o.SubStatus, got)
		}
	}
	for _, sub := range []int{3, 1008} {
		if got := decide(retries.Outcome{StatusCode: 403, SubStatus: sub}); got != retries.RefreshAccount {
			t.Errorf("a read after 403/%d: %s, but the help says it re-reads the account", sub, got)
		}
	}
	// 429: retried in place 9 times, then a failover.
	var st retries.State
	for i := 0; i < 9; i++ {
		if d := p.Decide(&st, read, retries.Outcome{StatusCode: 429, RetryAfter: 10}); d.Action != retries.RetrySameRegion {
			t.Fatalf("429 #%d: %s", i+1, d.Action)
		}
	}
	if d := p.Decide(&st, read, retries.Outcome{StatusCode: 429, RetryAfter: 10}); d.Action != retries.NextRegion {
		t.Errorf("the 10th 429: %s, want a failover", d.Action)
	}
	// A partition that moved: two refreshed retries, then a failover.
	st = retries.State{}
	for i := 0; i < 2; i++ {
		if d := p.Decide(&st, read, retries.Outcome{StatusCode: 410, SubStatus: 1002}); d.Action != retries.RetrySameRegion || !d.RefreshRouting {
			t.Fatalf("410/1002 #%d: %+v", i+1, d)
		}
	}
	if d := p.Decide(&st, read, retries.Outcome{StatusCode: 410, SubStatus: 1002}); d.Action != retries.NextRegion {
		t.Errorf("the third 410/1002: %s, want a failover", d.Action)
	}
}

func TestDeleteHelpSaysOnlyWhatAppliesToADelete(t *testing.T) {
	help := commandHelp(t, "delete")
	for _, wrong := range []string{"The item goes to stdout", "with the item and the full diagnostics", "create and replace add", "stays in the stored document", "409", "412 on a retry"} {
		if strings.Contains(help, wrong) {
			t.Errorf("delete --help says %q, which is not true of a delete", wrong)
		}
	}
	for _, want := range []string{"Nothing goes to stdout on success", "the same as retries for a delete", "exits with not-found (3)"} {
		if !strings.Contains(help, want) {
			t.Errorf("delete --help lacks %q", want)
		}
	}
	// The others keep what applies to them.
	if create := commandHelp(t, "create"); !strings.Contains(create, "The item goes to stdout") || !strings.Contains(create, "a 409 on a retry") {
		t.Errorf("create --help lost its output or tracking-id text:\n%s", create)
	}
	if upsert := commandHelp(t, "upsert"); strings.Contains(upsert, "stays in the stored document") {
		t.Error("upsert --help says a _trackingId stays in the document, but an upsert adds none")
	}
}

func TestRegionsHelpSaysOnlyWhatAppliesToRegions(t *testing.T) {
	help := commandHelp(t, "regions")
	// --database and --container name the container each region's read goes to.
	for _, wrong := range []string{"The item goes to stdout", "per-attempt diagnostics", "--diagnostics", "--no-replica-health"} {
		if strings.Contains(help, wrong) {
			t.Errorf("regions --help says %q, which means nothing to regions", wrong)
		}
	}
	if !strings.Contains(help, "The table goes to stdout") {
		t.Error("regions --help does not say what it prints")
	}
	if !strings.Contains(help, "--container") || !strings.Contains(help, "GET / is measured") {
		t.Error("regions --help does not say what --container is for")
	}
	// Hidden, not removed: scripts that pass them keep working.
	isolate(t)
	if r := cosmosctl(t, "", "regions", "--database", "app", "--diagnostics", "--no-latency", "--ephemeral"); r.code != 0 {
		t.Errorf("regions with the hidden flags: exit %d: %s", r.code, r.errOut)
	}
}
