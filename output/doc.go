// Package output renders what the engine did for the two audiences cosmosctl serves:
// aligned tables with optional colour for a person at a terminal, and stable JSON with
// units in the field names for a script.
//
// It owns the colour decision (terminal, NO_COLOR, --no-color, TERM=dumb), the width
// decision (StreamWidth: a terminal's tables fit it, piped output is never narrowed), the
// per-attempt diagnostics table with its timeline, the JSON object of item commands, item
// printing, query results (a table of items with columns from their properties, NDJSON
// lines, the JSON object with totals and every request, the per-request table), a borderless table helper for the other commands whose columns say how they
// give way on a narrow terminal (Column), and the latency chart: in the terminal, as an
// SVG image laid out from its text, and as a self-contained HTML page with the figures'
// table.
//
// It must not decide exit codes (package cmd maps errors to them in one place), read
// flags or the environment directly (callers pass getenv), or write anywhere but the
// writer it is given: callers choose stdout for data and stderr for diagnostics.
package output
