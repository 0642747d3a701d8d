// Package e2e holds, in its subdirectories, cosmosctl's end-to-end command tests: whole
// commands run in the test's process (internal/clitest) or as the built binary
// (internal/testkit) against emulators, grouped by what they exercise — probe, hedge-test,
// the data commands (query, export, changes), incidents, scripts, start-up, the incident
// runbook's rehearsal, the README's examples — so that each group
// has a test binary, and a time budget, of its own beside cmd's unit and command tests.
package e2e
