package cmd

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/cosmosctl/cosmosctl/export"
	"github.com/cosmosctl/cosmosctl/internal/progress"
	"github.com/cosmosctl/cosmosctl/internal/rulimit"
	"github.com/cosmosctl/cosmosctl/output"
)

// newExportLimiter paces an export's pages: at most maxRU RU/s when given, and slower
// after 429s either way (0: no cap of the user's).
func newExportLimiter(maxRU float64) export.Limiter { return rulimit.New(maxRU, nil) }

// exportProgressMode is where an export's progress goes: stdout is the data, so it goes
// to stderr, a bar on a terminal (unless the items stream to the same terminal, where
// the two would write over each other) and nothing otherwise; --progress says so
// explicitly.
func exportProgressMode(io *IOStreams, flag string, toStdout bool) progress.Mode {
	switch flag {
	case "bar":
		return progress.Bar
	case "json":
		return progress.JSON
	case "off":
		return progress.Off
	}
	if io.ErrTTY && !(toStdout && io.OutTTY) {
		return progress.Bar
	}
	return progress.Off
}

// exportProgress shows an export's progress on stderr; a nil one does nothing.
type exportProgress struct {
	r     *progress.Reporter
	total int64
}

func startExportProgress(io *IOStreams, mode progress.Mode, total int64) *exportProgress {
	r := progress.New(io.ErrOut, mode, progress.Options{Label: "export", Unit: "item", Width: func() int { return io.ErrWidth }})
	if r == nil {
		return nil
	}
	return &exportProgress{r: r, total: total}
}

func (p *exportProgress) update(c export.Counts) {
	if p == nil {
		return
	}
	// The total is the service's estimate: an export past it has a total it does not
	// know.
	total := p.total
	if c.Items > total {
		total = 0
	}
	p.r.Update(progress.Counts{Done: c.Items, Total: total, RU: c.RequestCharge})
}

func (p *exportProgress) stop() {
	if p != nil {
		p.r.Stop()
	}
}

// exportTotalTimeout bounds the question of how many items the container holds, asked
// only for the progress bar's ETA: an export never waits on it for long.
const exportTotalTimeout = 2 * time.Second

// containerItems is how many items the container holds by the service's partition
// statistics (sampled), 0 when it does not say.
func containerItems(ctx context.Context, sess *session) int64 {
	ctx, cancel := context.WithTimeout(ctx, exportTotalTimeout)
	defer cancel()
	stats, err := sess.client.PartitionStatistics(ctx, sess.settings.Database, sess.settings.Container)
	if err != nil {
		return 0
	}
	var n int64
	for _, s := range stats {
		n += s.DocumentCount
	}
	return n
}

// exportReport is the last line of --progress json: how the export ended, for a script.
type exportReport struct {
	Event         string  `json:"event"`
	Items         int64   `json:"items"`
	Bytes         int64   `json:"bytes"`
	RequestCharge float64 `json:"request_charge"`
	Requests      int64   `json:"requests"`
	Throttled     int64   `json:"throttled"`
	Complete      bool    `json:"complete"`
	Resumed       bool    `json:"resumed"`
	// OutputFile and StateFile are --output-file and --state; null for stdout, none.
	OutputFile *string             `json:"output_file"`
	StateFile  *string             `json:"state_file"`
	DurationMs float64             `json:"duration_ms"`
	Error      *output.ErrorObject `json:"error"`
}

func (o *exportOptions) writeReport(io *IOStreams, res export.Result, runErr error, took time.Duration, resumed bool) {
	r := exportReport{Event: "report", Items: res.Items, Bytes: res.Bytes, RequestCharge: math.Round(res.RequestCharge*100) / 100,
		Requests: res.Requests, Throttled: res.Throttled, Complete: res.Complete && runErr == nil, Resumed: resumed,
		DurationMs: float64(took.Microseconds()) / 1000}
	if o.outputFile != "" {
		r.OutputFile = &o.outputFile
	}
	if o.state != "" {
		r.StateFile = &o.state
	}
	if runErr != nil {
		r.Error = failureJSON(runErr, ExitCode(runErr)).Error
	}
	b, _ := json.Marshal(r)
	io.ErrOut.Write(append(b, '\n'))
}
