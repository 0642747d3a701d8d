//go:build race

package query

// The race detector slows these tests about tenfold; the property tests then run a
// third of their random scenarios (CI runs both ways).
const scenarioScale = 3
