// Package incident_test runs the commands an on-call engineer reaches for in the middle
// of an incident — read with an end-to-end timeout, regions after a failover, a command
// after a region was marked unavailable — against an emulator with one region sick, as
// the built binary where the behaviour is the process's (exit codes, time to answer).
package incident_test
