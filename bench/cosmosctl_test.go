package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// cosmosctl's commands, run in this process through cmd.Run as main runs them: the
// real commands with their flags, engine and output, stdout not a terminal.

// lineCounter counts the lines written to it and keeps nothing.
type lineCounter struct{ lines atomic.Int64 }

func (w *lineCounter) Write(p []byte) (int, error) {
	w.lines.Add(int64(bytes.Count(p, []byte{'\n'})))
	return len(p), nil
}

// cosmosctl runs one command; it fails unless the command exits 0.
func cosmosctl(ctx context.Context, out *bytes.Buffer, lines *lineCounter, args ...string) error {
	errOut := &testkit.Buffer{}
	streams := &cmd.IOStreams{In: strings.NewReader(""), ErrOut: errOut}
	if out != nil {
		streams.Out = out
	} else {
		streams.Out = lines
	}
	if code := cmd.Run(ctx, streams, args); code != 0 {
		return fmt.Errorf("cosmosctl %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return nil
}

// cosmosctlImport is `cosmosctl import FILE --mode MODE --concurrency 16 -o json`; the
// items it wrote are those its report counts as created or updated (none may have
// failed or been rejected).
func (s *suite) cosmosctlImport(mode string) func(context.Context, string) (int, error) {
	return func(ctx context.Context, container string) (int, error) {
		var out bytes.Buffer
		if err := cosmosctl(ctx, &out, nil, "import", s.importFile, "--mode", mode, "--concurrency", strconv.Itoa(importConcurrency),
			"--container", container, "-o", "json"); err != nil {
			return 0, err
		}
		var rep struct {
			Created        int64 `json:"created"`
			AlreadyPresent int64 `json:"already_present"`
			Updated        int64 `json:"updated"`
			Failed         int64 `json:"failed"`
			BadLines       int64 `json:"bad_lines"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			return 0, fmt.Errorf("import's report %q: %v", out.String(), err)
		}
		if rep.Failed != 0 || rep.BadLines != 0 || rep.AlreadyPresent != 0 {
			return 0, fmt.Errorf("import's report: %s", out.String())
		}
		return int(rep.Created + rep.Updated), nil
	}
}

// cosmosctlRead runs a command that prints one item a line; the items are its lines.
func (s *suite) cosmosctlRead(args ...string) func(context.Context, string) (int, error) {
	return func(ctx context.Context, container string) (int, error) {
		var lines lineCounter
		if err := cosmosctl(ctx, nil, &lines, append(args, "--container", container)...); err != nil {
			return 0, err
		}
		return int(lines.lines.Load()), nil
	}
}
