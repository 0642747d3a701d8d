package cmd

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are a command's standard streams and what is known about them. Tests swap in
// buffers; stdout carries data only, everything for a person goes to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY and ErrTTY say whether the streams are terminals (tables, colour, progress).
	OutTTY bool
	ErrTTY bool
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}
