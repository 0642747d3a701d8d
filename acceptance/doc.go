// Package acceptance holds the end-to-end acceptance tests that run the built cosmosctl
// binary as separate processes against an emulator process, kill them and resume them:
// heavy, process-level checks of what a release promises, kept in a package of their own
// so that they have a test binary (and its time budget) of their own beside cmd's.
package acceptance
