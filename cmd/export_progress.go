package cmd

import (
	"github.com/cosmosctl/cosmosctl/export"
)

// newExportLimiter is the RU/s limiter of an export (nil: none).
// TODO(i15): internal/rulimit once it lands on main.
func newExportLimiter(maxRU float64) export.Limiter { return nil }

// exportProgress shows an export's progress on stderr; a nil one does nothing.
// TODO(i15): internal/progress once it lands on main.
type exportProgress struct{}

func startExportProgress(io *IOStreams, mode string, toStdout bool) *exportProgress { return nil }

func (p *exportProgress) update(c export.Counts) {}
func (p *exportProgress) stop()                  {}
