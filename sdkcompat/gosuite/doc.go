// Package gosuite runs Microsoft's own emulator tests for the Go SDK — the
// emulator_*_test.go files azcosmos ships, at the version the main go.mod requires —
// against `cosmosctl emulator` in the shape of Microsoft's emulator
// (examples/microsoft-emulator.toml: https on localhost:8081, the well-known key), each
// test on an emulator of its own, started fresh for it and stopped after it.
//
// Those tests are Microsoft's judgement of what an emulator must do, written against
// Microsoft's emulator; the harness changes none of them. It copies the azcosmos module
// out of the module cache into a temporary directory, gives it the go.mod and go.sum in
// testdata/module (the suite needs testify, which the main module does not), compiles
// its test binary once, and runs each emulator test by name with EMULATOR=1 and
// SSL_CERT_FILE naming the emulator's certificate.
//
// The harness is in the package's tests alone (gosuite_test.go and beside it): it
// shells out to the built cosmosctl and to the suite's test binary, and holds the fixed
// port 8081 the suite hard-codes, one emulator at a time. What passes is
// checked against testdata/passing.txt, the recorded baseline: a test of the baseline
// that fails is a regression and fails the run; a test that passes and is not in the
// baseline is reported so that it can be added.
package gosuite
