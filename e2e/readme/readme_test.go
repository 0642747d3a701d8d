//go:build unix

package readme_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// The README's examples are run, so that they stay true: every command of a ```sh
// block, and every "$ " line of a ```text transcript, in README order, by bash, with
// the built binary as `cosmosctl` on PATH, in a scratch directory and home of their own.
// A new example is run by default; what the test does differently for an example is
// listed in the tables below, each entry with its reason, and an entry that matches no
// example fails the test, so the tables cannot go stale.
//
// How examples run:
//   - With no endpoint configured, data commands use the embedded emulator (its data in
//     a scratch COSMOSCTL_EMULATOR_DATA), as on a fresh machine.
//   - A line that starts the standalone emulator (`cosmosctl emulator`, with flags or
//     `&`, no subcommand) starts it with the same flags on free ports (--port 0): the
//     test cannot count on 8081 being free. Until the end of the section (the next
//     heading) http://127.0.0.1:8081 in later examples means that emulator, and
//     COSMOSCTL_EMULATOR_ENDPOINT (the control subcommands' documented override of
//     their default, 127.0.0.1:8081) points at it.
//   - `export NAME=VALUE` lines last until the end of the section, as the emulator does.
//   - Any other command with a trailing & runs in the background from when it has
//     printed its first line until the end of the section.
//   - Each section gets a new home directory (profiles file, caches).

// readmeNotRun are the examples the test does not run, by prefix, and why.
var readmeNotRun = map[string]string{
	"go run . hedge-test":                                             "compiles the module a second time; the command it runs, `cosmosctl hedge-test`, is run from the README's transcript",
	"go test -race -count=1 -timeout 10m ./...":                       "the test suite this test is part of",
	"go test -run='^$' -fuzz=":                                        "fuzzing runs for 30–60 s by design; the fuzz targets' seed corpora run in go test",
	"go test -run='^$' -bench=":                                       "benchmarks measure the machine for seconds to minutes; the README's figures are their output",
	"go build -o cosmosctl .":                                         "builds the binary this test runs: cosmosctlBinary builds it with go build",
	"examples/rehearse-incident.sh":                                   "starts a standalone emulator on 8081 and the next three ports, which may be taken; e2e/runbook runs it on free ports with 2 s probes and checks its transcript",
	"cosmosctl emulator --scenario examples/microsoft-emulator.toml":  "the scenario fixes port 8081, which may be taken, and the https endpoints are not rewritten as http://127.0.0.1:8081 is; e2e/tls runs the scenario on free ports and these commands against it with SSL_CERT_FILE",
	"SSL_CERT_FILE=emulator.pem":                                      "against the https emulator of examples/microsoft-emulator.toml on 8081 (see above); e2e/tls runs status --wait, create and read with SSL_CERT_FILE",
	"echo '{\"id\":\"1\",\"pk\":\"a\"}' | SSL_CERT_FILE=emulator.pem": "against the https emulator of examples/microsoft-emulator.toml on 8081 (see above); e2e/tls runs create with SSL_CERT_FILE",
	"cosmosctl changes --from now --follow --state feed.json":         "follows the feed until Ctrl-C; TestChangesFollowUntilInterrupted runs it and interrupts it (exit 130, the position saved and named on stderr)",
	"parallel -j4 cosmosctl":                                          "needs GNU parallel, which the machines do not have; the shards it starts are what cmd's TestImportShardsImportEveryLineExactlyOnce runs (and the export's shard tests for export)",
}

// readmeSmaller are examples run smaller than written, to keep the test bounded in time:
// the README's size, what the test runs instead, and why.
var readmeSmaller = map[string]struct{ from, to, why string }{
	"cosmosctl hedge-test": {"cosmosctl hedge-test", "cosmosctl hedge-test --count 100",
		"1000 reads per strategy (the default) take about 16 s; 100 show the same table"},
	"cosmosctl probe --duration 30s --rate 20 --fail-on 'p99>200ms,errors>1%' || page-oncall": {"--duration 30s", "--duration 1s",
		"30 s of probing; 1 s (20 reads a region) exercises the same rules"},
	"cosmosctl probe --duration 10m --metrics-addr :9464": {"--duration 10m --metrics-addr :9464", "--duration 1s --metrics-addr 127.0.0.1:0",
		"ten minutes, on a port that may be taken; 1 s on a free loopback port serves the same metrics"},
	"cosmosctl probe --replicas": {"--replicas", "--replicas --count 25",
		"the default --count of 100 reads takes about 2 s; 25 show the same table"},
	"cosmosctl probe --hedge-threshold 50ms": {"--hedge-threshold 50ms", "--hedge-threshold 50ms --count 25",
		"the default --count of 100 reads takes about 2 s; 25 show the same rows, (hedged) among them"},
}

// readmeEnv are variables an example runs with, beyond what the README sets, and why.
var readmeEnv = map[string]struct{ env, why string }{
	"for i in $(seq 10); do cosmosctl read o1 --pk t1 -o json >/dev/null; done": {"COSMOSCTL_ATTEMPT_TIMEOUT=500ms",
		"the first three reads wait out the 6 s attempt timeout against the hung region (18 s); capped at 500 ms they trip region health the same way"},
}

// readmeExitCodes are the examples that exit non-zero, as the README says they do.
var readmeExitCodes = map[string]int{
	"cosmosctl create -f order.json": cmd.ExitUnavailable, // "East US, the write region, refuses connections"
	"cosmosctl import mixed.ndjson":  cmd.ExitPartial,     // "2 lines rejected"
	// "A level stronger than the account's is refused before the first request"
	"cosmosctl read order-1 --pk tenant-7 --consistency strong": cmd.ExitUsage,
}

// readmeShows are what an example must print (stdout and stderr together), because the
// README says it does.
var readmeShows = map[string]*regexp.Regexp{
	`cat read.ndjson`:         regexp.MustCompile(`(?m)^\{"event":"diagnostics","diagnostics":\{.*"partition_key_range_id":"\d+".*"lsn":\d+`),
	`cosmosctl help statuses`: regexp.MustCompile(`429/3200\s+the partition's RU/s budget was used up`),
	`cosmosctl read order-1 --pk tenant-7 --exclude "East US" --diagnostics`: regexp.MustCompile(`winner\s+West US \(attempt 1\)`),
	`echo '{"id":"order-1","pk":"tenant-7","total":42}' | cosmosctl create -f - >/dev/null`: regexp.MustCompile(
		`cosmosctl: http://127\.0\.0\.1:\d+ is a cosmosctl emulator; using what it announces: its well-known key, database app, container items`),
	`cosmosctl read order-1 --pk tenant-7 --hedge-threshold 50ms --diagnostics`: regexp.MustCompile(`winner\s+West US \(attempt 2\)`),
	`cosmosctl create -f order.json`:                                            regexp.MustCompile(`the write region East US did not take the write`),
	"cosmosctl read o1 --pk t1":                                                 regexp.MustCompile(`using the embedded emulator.* served by cosmosctl probe \(pid \d+\)`),
	`cosmosctl health`:                                                          regexp.MustCompile(`East US\s+—\s+read\s+\S+\s+\d+ timeouts`),
	"cosmosctl read order-1 --pk tenant-7 --consistency strong":                 regexp.MustCompile(`consistency Strong is stronger than the account's Session`),
	"cosmosctl changes --state feed.json":                                       regexp.MustCompile(`(?m)^\{"id":"order-20",`),
	// The orders of tenant-1 the query examples wrote, one a line.
	"cosmosctl export --pk tenant-1 --max-ru-per-second 200 --progress json 2>progress.ndjson | wc -l": regexp.MustCompile(`^\s*[1-9]\d*\s*$`),
	// A prefix of a hierarchical key: acme's items, in order, and globex's e9 (n 9, which
	// would come first) not among them.
	`cosmosctl query 'SELECT c.id, c.user FROM c ORDER BY c.n DESC' --container visits --pk '["acme"]'`: regexp.MustCompile(
		`(?m)^id\s+user\s*\ne3\s+user-3\s*\ne2\s+user-2\s*\ne1\s+user-1\s*$`),
	`cosmosctl query 'SELECT VALUE COUNT(1) FROM c' --container visits --pk '["acme"]' -o json --jq '.items[0]'`: regexp.MustCompile(`(?m)^3$`),
	`cosmosctl changes --container visits --pk '["acme"]' --state acme.json | wc -l`:                             regexp.MustCompile(`(?m)^\s*3\s*$`),
	// A filter on an excluded path: every document loaded for the five output, and the
	// index proposed; once it is applied, one document loaded per document output.
	`cosmosctl query "SELECT * FROM c WHERE c.carrier = 'c3'" --container shipments --explain`: regexp.MustCompile(
		`(?s)total\s+4\s+\S+\s+\S+\s+40\s+5\s+8\.0\s.*could not use an index and scanned.*/carrier/\?\s+\(ROOT\.carrier = "c3"\).*-\s+"path": "/carrier/\?"`),
	`cosmosctl query "SELECT * FROM c WHERE c.carrier = 'c3'" --container shipments --explain -o json --jq .totals.retrieved_per_output`: regexp.MustCompile(`(?m)^1$`),
	// The lease checkpointed after the first of four writes: lag 3, not renewed since January.
	"cosmosctl changes lag --container orders-feed --lease-container leases": regexp.MustCompile(
		`(?m)^0\s+0\s+host-7\s+\d+d\d+h\s+3\s+stuck\s+—\n1 lease, total lag 3, oldest checkpoint \d+d\d+h ago \(orders-processorlocalhost_app_orders-feed\.\.0\); 1 stuck \(not renewed for more than 1m0s\)$`),
	`cosmosctl changes lag --container orders-feed --lease-container leases --fail-on-stuck || echo "exit $?: a lease is stuck"`: regexp.MustCompile(`(?m)^exit 10: a lease is stuck$`),
	// Most reads are of tenant-1: its range is hot, and the verdict names it and the key
	// (by its 429s, or on a machine too slow to spend the budget, by its RU alone).
	"cosmosctl skew --sample 3s --ids ids.ndjson": regexp.MustCompile(
		`(?m)^verdict: hot partition: \d+ % of RU (and \d+ % of 429s )?on range \d+.* \(key tenant-1 took \d+ % of its RU in the sample\)$`),
	"cosmosctl import mixed.ndjson":        regexp.MustCompile(`2 lines rejected, with their line numbers and reasons, in mixed\.rejected\.ndjson`),
	"cosmosctl emulator split 1":           regexp.MustCompile(`(?m)^split range 1 of app/items into 4 and 5\n`),
	"cosmosctl emulator merge 2 3 -o json": regexp.MustCompile(`"retired": \[\s*"2",\s*"3"\s*\],\s*"created": \[\s*\{\s*"id": "6"`),
	"cosmosctl import items.ndjson --state items.state --concurrency 32 --max-ru-per-second 2000": regexp.MustCompile(
		`resuming the import from items\.state: 1,000 lines done by 1 earlier run`),
	`printf '{"id":"big-%s","pk":"a","pad":"%0100000d"}' 2 0 | cosmosctl create -f - --diagnostics >/dev/null`: regexp.MustCompile(
		`429/3200\s+0\s+0\.00\s+failed[^\n]*\n2\s+East US\s+retry\s+\S+\s+\S+\s+\S+\s+\S+\s+201\s+0\s+490\.00\s+won[^\n]*\n(?s:.*)statuses\s+429/3200: the partition's RU/s budget was used up\nthrottled\s+1 attempt answered 429; retry-after asked \S+ in all, waited \S+`),
}

// readmeGiven sets up what an example needs that the README leaves to the reader or to
// the text around it: it returns variables to run the example with, and what to undo
// after it (nil for nothing).
type readmeGiven func(r *readmeRun, ex readmeExample) (env []string, undo func())

var readmeGivens = map[string]struct {
	given readmeGiven
	why   string
}{
	`cosmosctl read order-1 --pk tenant-7 --exclude "East US" --diagnostics`:                           {givenOrder, "a transcript of reading the item the everyday commands create (and, at their end, delete)"},
	"cosmosctl read order-1 --pk tenant-7 --hedge-threshold 300ms --hedge-step 100ms --e2e-timeout 2s": {givenOrder, "reads the item the everyday commands create"},
	`cosmosctl replace order-1 -f order.json --if-match "$ETAG"`:                                       {givenETag, "ETAG is the item's etag, which the README says a read prints"},
	`printf %s "$KEY" | cosmosctl config set --profile prod key`:                                       {givenKey, "KEY is the reader's account key"},
	"cosmosctl config list":          {givenProfiles, "the profiles file the README shows just before"},
	"cosmosctl read o1 --pk t1":      {givenO1, "the item the transcript reads, created while the probe serves the data"},
	"cosmosctl create -f order.json": {givenWriteRegionDown, "the transcript's situation: a standalone emulator whose write region, East US, refuses connections"},
}

// readmeExample is one command of the README.
type readmeExample struct {
	line    int    // in README.md
	section string // the heading it is under
	text    string // as written, without the transcript's "$ "
	command string // text without a trailing comment: the key of the tables above
	block   int
}

// readmeBlock is a fenced code block of the README.
type readmeBlock struct {
	lang, section string
	line          int
	lines         []string
}

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	section := ""
	for i, l := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &readmeBlock{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), section: section, line: i + 1}
		case cur != nil && strings.HasPrefix(l, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		case strings.HasPrefix(l, "#"):
			section = strings.TrimSpace(strings.TrimLeft(l, "#"))
		}
	}
	if cur != nil {
		t.Fatalf("README.md: the code block at line %d is not closed", cur.line)
	}
	return blocks
}

func readmeExamples(t *testing.T, blocks []readmeBlock) []readmeExample {
	t.Helper()
	var out []readmeExample
	for bi, b := range blocks {
		for i := 0; i < len(b.lines); i++ {
			text := b.lines[i]
			switch {
			case b.lang == "sh" && strings.TrimSpace(text) != "" && !strings.HasPrefix(strings.TrimSpace(text), "#"):
			case b.lang == "text" && strings.HasPrefix(text, "$ "):
				text = strings.TrimPrefix(text, "$ ")
			default:
				continue
			}
			line := b.line + 1 + i
			for strings.HasSuffix(strings.TrimRight(text, " "), `\`) && i+1 < len(b.lines) {
				i++
				text = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(text, " "), `\`), " ") + " " + strings.TrimSpace(strings.TrimPrefix(b.lines[i], "> "))
			}
			out = append(out, readmeExample{line: line, section: b.section, text: text, command: withoutComment(text), block: bi})
		}
	}
	return out
}

// withoutComment drops a trailing shell comment: a # that starts a word, outside quotes.
func withoutComment(s string) string {
	var quote rune
	for i, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs every README example")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("the README's examples are bash")
	}
	blocks := readmeBlocks(t)
	examples := readmeExamples(t, blocks)
	if len(examples) < 40 {
		t.Fatalf("found only %d examples in README.md", len(examples))
	}
	checkReadmeTables(t, examples)

	testkit.Isolate(t)
	r := &readmeRun{t: t, bin: testkit.Binary(t), bash: bash, blocks: blocks, dir: t.TempDir()}
	r.prepare()
	defer r.endSection()
	for _, ex := range examples {
		if ex.section != r.section {
			r.endSection()
			r.startSection(ex.section)
		}
		if reason, skip := notRun(ex); skip {
			t.Logf("README.md:%d not run (%s): %s", ex.line, reason, ex.text)
			continue
		}
		r.run(ex)
	}
}

func notRun(ex readmeExample) (string, bool) {
	for prefix, reason := range readmeNotRun {
		if strings.HasPrefix(ex.command, prefix) {
			return reason, true
		}
	}
	return "", false
}

// checkReadmeTables fails for an entry of the tables that matches no example: the
// README changed and the test has not followed.
func checkReadmeTables(t *testing.T, examples []readmeExample) {
	t.Helper()
	has := func(key string, prefix bool) bool {
		for _, ex := range examples {
			if ex.command == key || prefix && strings.HasPrefix(ex.command, key) {
				return true
			}
		}
		return false
	}
	for key := range readmeNotRun {
		if !has(key, true) {
			t.Errorf("readmeNotRun: no README example starts with %q", key)
		}
	}
	keys := []string{}
	for k, v := range readmeSmaller {
		keys = append(keys, k)
		if !strings.Contains(k, v.from) {
			t.Errorf("readmeSmaller: %q does not contain %q", k, v.from)
		}
	}
	for k := range readmeEnv {
		keys = append(keys, k)
	}
	for k := range readmeExitCodes {
		keys = append(keys, k)
	}
	for k := range readmeShows {
		keys = append(keys, k)
	}
	for k := range readmeGivens {
		keys = append(keys, k)
	}
	for _, k := range keys {
		if !has(k, false) {
			t.Errorf("readme_test.go names %q, which is no longer a README example", k)
		}
	}
}

// readmeRun is the state of one pass over the README.
type readmeRun struct {
	t      *testing.T
	bin    string
	bash   string
	blocks []readmeBlock
	dir    string // the working directory: order.json, examples/, ./cosmosctl
	base   []string

	section string
	home    string
	exports []string
	emu     *readmeEmulator
	bg      []*readmeBackground // commands the section started with a trailing &
}

// prepare makes the working directory what a reader of the README has: a checkout's
// examples/, the binary built as ./cosmosctl, and an order.json.
func (r *readmeRun) prepare() {
	t := r.t
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(examples, filepath.Join(r.dir, "examples")))
	must(t, os.Symlink(r.bin, filepath.Join(r.dir, "cosmosctl")))
	must(t, os.WriteFile(filepath.Join(r.dir, "order.json"), []byte(`{"id":"order-1","pk":"tenant-7","total":42}`), 0o644))
	scratch := t.TempDir()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "COSMOSCTL_"), strings.HasPrefix(name, "XDG_"), name == "HOME", name == "NO_COLOR", name == "PATH", name == "BASH_ENV", name == "ENV":
		default:
			r.base = append(r.base, kv)
		}
	}
	r.base = append(r.base,
		"PATH="+filepath.Dir(r.bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"COSMOSCTL_EMULATOR_DATA="+filepath.Join(scratch, "emulator"),
		"COSMOSCTL_STATE_DIR="+filepath.Join(scratch, "state"),
	)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *readmeRun) startSection(name string) {
	r.section = name
	r.home = r.t.TempDir()
	r.exports = nil
}

func (r *readmeRun) endSection() {
	for _, b := range r.bg {
		b.stop()
	}
	r.bg = nil
	if r.emu != nil {
		r.emu.stop(r.t)
		r.emu = nil
	}
}

// env is what an example runs with: the isolated base, the section's home and exports,
// and the standalone emulator's endpoint for the control subcommands.
func (r *readmeRun) env(extra ...string) []string {
	env := append([]string{}, r.base...)
	env = append(env, "HOME="+r.home, "XDG_CONFIG_HOME="+filepath.Join(r.home, ".config"), "XDG_CACHE_HOME="+filepath.Join(r.home, ".cache"))
	if r.emu != nil {
		env = append(env, "COSMOSCTL_EMULATOR_ENDPOINT="+r.emu.endpoint)
	}
	env = append(env, r.exports...)
	return append(env, extra...)
}

// localize makes the README's http://127.0.0.1:8081 the section's emulator.
func (r *readmeRun) localize(s string) string {
	if r.emu == nil {
		return s
	}
	return strings.ReplaceAll(s, "http://127.0.0.1:8081", r.emu.endpoint)
}

// preamble runs before every example: strict, so that a failing command in a pipe or
// a loop fails the example, and page-oncall, which the README leaves to the reader.
const readmePreamble = `set -eo pipefail
page-oncall() { echo "page-oncall: the probe breached a --fail-on threshold" >&2; }
`

func (r *readmeRun) run(ex readmeExample) {
	t := r.t
	where := fmt.Sprintf("README.md:%d (%s)", ex.line, ex.text)
	words := r.words(ex)
	switch {
	case len(words) >= 2 && words[0] == "cosmosctl" && words[1] == "emulator" && (len(words) == 2 || strings.HasPrefix(words[2], "-")) && !containsHelp(words):
		r.endSection() // one standalone emulator at a time, as on one machine's port 8081
		r.emu = startReadmeEmulator(t, r.bin, r.env(), r.dir, words[2:])
		return
	case len(words) >= 1 && words[0] == "export":
		for _, kv := range words[1:] {
			r.exports = append(r.exports, r.localize(kv))
		}
		return
	case len(words) >= 3 && words[0] == "cosmosctl" && words[1] == "emulator" && r.emu == nil:
		// A control subcommand needs a running emulator: the README starts one in the
		// text before; here the section has none, so start one as `cosmosctl emulator` would.
		r.emu = startReadmeEmulator(t, r.bin, r.env(), r.dir, nil)
	}

	script := r.localize(ex.text)
	var extra []string
	if s, ok := readmeSmaller[ex.command]; ok {
		script = strings.Replace(script, s.from, s.to, 1)
		t.Logf("%s: run with %s instead of %s: %s", where, s.to, s.from, s.why)
	}
	if e, ok := readmeEnv[ex.command]; ok {
		extra = append(extra, e.env)
		t.Logf("%s: run with %s: %s", where, e.env, e.why)
	}
	if g, ok := readmeGivens[ex.command]; ok {
		env, undo := g.given(r, ex)
		extra = append(extra, env...)
		if undo != nil {
			defer undo()
		}
	}

	if strings.HasSuffix(strings.TrimSpace(ex.command), "&") {
		// A command the README leaves running while the next ones run: started in its
		// own process group, it runs until the section ends.
		r.bg = append(r.bg, r.startBackground(where, script, r.env(extra...)))
		return
	}
	code, out := r.bashRun(script, r.env(extra...))
	want := readmeExitCodes[ex.command]
	if code != want {
		t.Errorf("%s: exit %d, want %d\n%s", where, code, want, out)
		return
	}
	if re, ok := readmeShows[ex.command]; ok && !re.MatchString(out) {
		t.Errorf("%s: the output does not show what the README says (%s):\n%s", where, re, out)
	}
}

func containsHelp(words []string) bool {
	for _, w := range words {
		if w == "--help" || w == "-h" {
			return true
		}
	}
	return false
}

// words splits an example into words as bash does (quotes, comments, a trailing &).
func (r *readmeRun) words(ex readmeExample) []string {
	cmd := strings.TrimSpace(strings.TrimSuffix(ex.command, "&"))
	if strings.ContainsAny(cmd, "|;<>$`&()") {
		return []string{cmd} // a pipeline or a loop: for bash alone
	}
	out, err := exec.Command(r.bash, "-c", `printf '%s\0' `+cmd).Output()
	if err != nil {
		r.t.Fatalf("README.md:%d: bash cannot split %q: %v", ex.line, cmd, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// bashRun runs script in the working directory and returns its exit code and output.
// A minute bounds it; the whole process group goes when it is up, so that no command
// an example started outlives it.
func (r *readmeRun) bashRun(script string, env []string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bash, "-c", readmePreamble+script)
	cmd.Dir, cmd.Env = r.dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		r.t.Errorf("timed out after a minute: %s", script)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		r.t.Fatalf("running bash: %v\n%s\noutput:\n%s", err, script, out.String())
	}
	return 0, out.String()
}

// readmeBackground is an example started with a trailing &.
type readmeBackground struct {
	cmd  *exec.Cmd
	out  *testkit.Buffer
	done chan struct{}
}

// startBackground starts script in the background and waits until it has printed its
// first line (a command that serves or probes says what it did first), so that the
// next example finds it at work.
func (r *readmeRun) startBackground(where, script string, env []string) *readmeBackground {
	t := r.t
	cmd := exec.Command(r.bash, "-c", readmePreamble+strings.TrimSuffix(strings.TrimSpace(script), "&"))
	cmd.Dir, cmd.Env = r.dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b := &readmeBackground{cmd: cmd, out: &testkit.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = b.out, b.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	go func() { _ = cmd.Wait(); close(b.done) }()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(b.out.String(), "\n") {
		select {
		case <-b.done:
			t.Fatalf("%s: ended before the next example could use it:\n%s", where, b.out.String())
		case <-deadline:
			b.stop()
			t.Fatalf("%s: printed nothing in 30 s:\n%s", where, b.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return b
}

// stop ends the background command and everything it started.
func (b *readmeBackground) stop() {
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
	}
}

// cosmosctl runs the binary with the section's environment, for the givens.
func (r *readmeRun) cosmosctl(env []string, stdin string, args ...string) (int, string, string) {
	return testkit.RunBinary(r.t, r.bin, env, stdin, args...)
}

// readmeEmulator is a standalone `cosmosctl emulator` process.
type readmeEmulator struct {
	cmd      *exec.Cmd
	endpoint string
	stderr   *bytes.Buffer
}

// startReadmeEmulator starts `cosmosctl emulator ARGS --port 0 -o json` and waits for
// the endpoint it prints.
func startReadmeEmulator(t *testing.T, bin string, env []string, dir string, args []string) *readmeEmulator {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"emulator"}, args...), "--port", "0", "-o", "json")...)
	cmd.Env, cmd.Dir = env, dir
	e := &readmeEmulator{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = e.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var printed struct {
		Endpoint string `json:"endpoint"`
	}
	if err != nil || json.Unmarshal([]byte(line), &printed) != nil || printed.Endpoint == "" {
		e.stop(t)
		t.Fatalf("cosmosctl emulator %s printed %q (%v): %s", strings.Join(args, " "), line, err, e.stderr)
	}
	e.endpoint = printed.Endpoint
	return e
}

func (e *readmeEmulator) stop(t *testing.T) {
	t.Helper()
	e.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- e.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		e.cmd.Process.Kill()
		<-done
		t.Errorf("the standalone emulator did not stop on interrupt within 10 s: %s", e.stderr)
	}
}

// The givens.

var readmeOrder = `{"id":"order-1","pk":"tenant-7","total":42}`

// givenOrder upserts the everyday commands' item where the example will read it.
func givenOrder(r *readmeRun, _ readmeExample) ([]string, func()) {
	if code, _, errOut := r.cosmosctl(r.env(), readmeOrder, "upsert", "-f", "-"); code != 0 {
		r.t.Fatalf("upserting order-1: exit %d: %s", code, errOut)
	}
	return nil, nil
}

// givenO1 creates the item o1 (partition key t1).
func givenO1(r *readmeRun, _ readmeExample) ([]string, func()) {
	if code, _, errOut := r.cosmosctl(r.env(), `{"id":"o1","pk":"t1"}`, "upsert", "-f", "-"); code != 0 {
		r.t.Fatalf("upserting o1: exit %d: %s", code, errOut)
	}
	return nil, nil
}

// givenETag reads the item's etag, as the README says the reader does.
func givenETag(r *readmeRun, _ readmeExample) ([]string, func()) {
	code, out, errOut := r.cosmosctl(r.env(), "", "read", "order-1", "--pk", "tenant-7", "-o", "json")
	var res struct {
		ETag string `json:"etag"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.ETag == "" {
		r.t.Fatalf("reading order-1's etag: exit %d: %s %s", code, out, errOut)
	}
	return []string{"ETAG=" + res.ETag}, nil
}

func givenKey(*readmeRun, readmeExample) ([]string, func()) {
	return []string{"KEY=" + testkit.AccountKey}, nil
}

// givenProfiles writes the profiles file of the README's toml block in this section
// where the README says it lives, and the key file it names.
func givenProfiles(r *readmeRun, ex readmeExample) ([]string, func()) {
	var toml string
	for _, b := range r.blocks {
		if b.lang == "toml" && b.section == ex.section && strings.Contains(strings.Join(b.lines, "\n"), "[profiles.prod]") {
			toml = strings.Join(b.lines, "\n") + "\n"
		}
	}
	if toml == "" {
		r.t.Fatalf("README.md: no toml block with [profiles.prod] in %q", ex.section)
	}
	dir := filepath.Join(r.home, ".config", "cosmosctl")
	must(r.t, os.MkdirAll(dir, 0o700))
	must(r.t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o600))
	must(r.t, os.WriteFile(filepath.Join(dir, "prod.key"), []byte(testkit.AccountKey), 0o600))
	return nil, nil
}

// givenWriteRegionDown starts a standalone emulator of its own for the example, known
// to earlier commands, with East US refusing connections, and points the example at it.
func givenWriteRegionDown(r *readmeRun, _ readmeExample) ([]string, func()) {
	emu := startReadmeEmulator(r.t, r.bin, r.env(), r.dir, []string{"--latency", "none"})
	undo := func() { emu.stop(r.t) }
	env := []string{"COSMOSCTL_ENDPOINT=" + emu.endpoint, "COSMOSCTL_EMULATOR_ENDPOINT=" + emu.endpoint}
	// The account as earlier commands saw it while it was well: the topology they
	// remember names the regional endpoints to fall back to (as the README says).
	if code, _, errOut := r.cosmosctl(r.env(env...), "", "regions", "--no-latency"); code != 0 {
		undo()
		r.t.Fatalf("regions before the outage: exit %d: %s", code, errOut)
	}
	if code, _, errOut := r.cosmosctl(r.env(), "", "emulator", "fault", "add", "--endpoint", emu.endpoint, "--region", "East US", "--effect", "refuse"); code != 0 {
		undo()
		r.t.Fatalf("adding the refuse fault: exit %d: %s", code, errOut)
	}
	return env, undo
}

func TestReadmeExamplesAreEveryShellLineAndEveryTranscriptCommand(t *testing.T) {
	blocks := []readmeBlock{
		{lang: "sh", section: "A", line: 10, lines: []string{"# a comment line", "cosmosctl read a --pk b   # why", "", "cosmosctl emulator --regions 'East US' \\", "  --latency none"}},
		{lang: "text", section: "B", line: 20, lines: []string{"$ cosmosctl regions", "REGION  ROLE", "$ echo '{\"id\":\"x#1\"}' | cosmosctl create -f -"}},
		{lang: "toml", section: "B", line: 30, lines: []string{"key = 1"}},
		{lang: "", section: "C", line: 40, lines: []string{"$ not an example: no language"}},
	}
	var got []string
	for _, ex := range readmeExamples(t, blocks) {
		got = append(got, fmt.Sprintf("%d %s %s", ex.line, ex.section, ex.command))
	}
	want := []string{
		"12 A cosmosctl read a --pk b",
		"14 A cosmosctl emulator --regions 'East US' --latency none",
		"21 B cosmosctl regions",
		`23 B echo '{"id":"x#1"}' | cosmosctl create -f -`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("examples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
