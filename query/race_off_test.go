//go:build !race

package query

const scenarioScale = 1
