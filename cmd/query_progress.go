package cmd

import (
	"fmt"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/query"
)

// queryProgressDelay is how long a query runs before its progress line appears: a
// query that answers at once needs none, and a line that flashes by is noise.
var queryProgressDelay = 500 * time.Millisecond

// queryProgressTick is how often the line is redrawn while nothing arrives, so that its
// elapsed time shows a query waiting on a slow page.
const queryProgressTick = 250 * time.Millisecond

// queryProgress is the progress line of a long query on stderr (a terminal): pages,
// items, RU and elapsed time, redrawn in place and cleared at the end. A nil
// *queryProgress does nothing.
type queryProgress struct {
	io      *IOStreams
	start   time.Time
	mu      sync.Mutex
	stats   query.Totals
	shown   bool
	stopped bool
	done    chan struct{}
	wg      sync.WaitGroup
}

// startQueryProgress starts the progress line when stderr is a terminal, unless the
// items stream to a terminal too (-o ndjson on a terminal: the items are the progress,
// and the two would write over each other). Table and JSON write stdout at the end,
// once the line is gone.
func startQueryProgress(io *IOStreams, format string) *queryProgress {
	if !io.ErrTTY || (format == config.OutputNDJSON && io.OutTTY) {
		return nil
	}
	p := &queryProgress{io: io, start: time.Now(), done: make(chan struct{})}
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *queryProgress) loop() {
	defer p.wg.Done()
	t := time.NewTicker(queryProgressTick)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			p.draw()
		}
	}
}

// update takes the run's totals so far.
func (p *queryProgress) update(s query.Totals) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.stats = s
	p.mu.Unlock()
	p.draw()
}

func (p *queryProgress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start)
	if p.stopped || elapsed < queryProgressDelay {
		return
	}
	s := p.stats
	fmt.Fprintf(p.io.ErrOut, "\r\033[Kquery: %s, %s, %.2f RU, %s", output.HumanCount(s.Pages, "page"), output.HumanCount(s.Items, "item"),
		s.RequestCharge, output.HumanDuration(elapsed.Round(100*time.Millisecond)))
	p.shown = true
}

func (p *queryProgress) clear() {
	if p.shown {
		fmt.Fprint(p.io.ErrOut, "\r\033[K")
		p.shown = false
	}
}

// stop clears the line for good.
func (p *queryProgress) stop() {
	if p == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.clear()
}
