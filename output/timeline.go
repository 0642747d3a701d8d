package output

import (
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/engine"
)

// TimelineWidth is the number of cells the diagnostics timeline spans when there is
// room (always, when the table is piped): the whole operation, from its start to its last
// recorded instant. On a narrow terminal it takes what the other columns leave, down to
// timelineMin.
const TimelineWidth = 30

// timelineMin is the narrowest timeline still worth drawing: a hedge 30% of the way in
// still starts a few cells along.
const timelineMin = 12

// timeline draws one attempt on a bar scaled to the operation's total duration: blanks
// before the attempt was sent, a run while it was in flight, and a mark where it ended
// (an answer, or a cancellation/failure). An attempt still in flight runs to the end
// with no mark. Laid out one above the other, the bars make a hedge obvious at a glance:
// the second region starts part-way along and both end where the winner answered. The
// bar is width cells wide.
func timeline(a engine.Attempt, total time.Duration, sym symbols, width int) string {
	end := a.Start + a.Duration
	inFlight := a.Outcome == engine.OutcomeInFlight
	if inFlight {
		end = total
	}
	first := cellAt(a.Start, total, false, width)
	last := cellAt(end, total, true, width)
	if last < first {
		last = first
	}
	mark := ""
	switch a.Outcome {
	case engine.OutcomeWon, engine.OutcomeLost:
		mark = sym.answer
	case engine.OutcomeCancelled, engine.OutcomeFailed:
		mark = sym.failed
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", first))
	if mark == "" {
		b.WriteString(strings.Repeat(sym.bar, last-first+1))
	} else {
		b.WriteString(strings.Repeat(sym.bar, last-first))
		b.WriteString(mark)
	}
	b.WriteString(strings.Repeat(" ", width-1-last))
	return b.String()
}

// cellAt maps an instant to a cell. A start falls in the cell that contains it; an end
// falls in the cell it finishes, so an attempt spanning the whole operation fills the bar
// exactly.
func cellAt(t, total time.Duration, isEnd bool, width int) int {
	if total <= 0 || t <= 0 {
		return 0
	}
	if t >= total {
		return width - 1
	}
	scaled := int64(t) * int64(width)
	c := int(scaled / int64(total))
	if isEnd && scaled%int64(total) == 0 {
		c-- // an end exactly on a boundary finishes the previous cell
	}
	return min(max(c, 0), width-1)
}

// timelineSpan is the duration the timeline covers: the operation's duration, stretched
// if an attempt was recorded ending later (diagnostics read mid-flight).
func timelineSpan(d *engine.Diagnostics) time.Duration {
	total := d.Duration
	for _, a := range d.Attempts {
		total = max(total, a.Start+a.Duration)
	}
	return total
}
