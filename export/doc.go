// Package export copies a container's items to an NDJSON stream, one item a line, from a
// Source (a query's pages, or a snapshot of the change feed), and checkpoints where it is
// so that an interrupted export resumes with every item in the file exactly once.
//
// It owns the copy loop (pace, read a page, strip, write, checkpoint), the stripping of
// system properties, and the state file that binds a position and the output's length
// to one export (account, database, container, source, query). It must not parse flags
// or print for a person: cmd/export.go does, and hands it an options value.
//
// Exactly once, with a file: the state records the source's position after the last
// page it checkpointed together with the output's length then. The output is flushed
// and synced before the state is replaced (atomically), so a process killed at any
// point leaves a state whose length is at most the file's; a resumed run truncates the
// file to that length and reads on from the position, so the items written after the
// checkpoint are written again exactly where they were.
package export
