package bulk

import (
	"bufio"
	"fmt"
	"os"
)

// RejectedFile is the rejected-lines file of a run: one Rejection a line.
type RejectedFile struct {
	f *os.File
	w *bufio.Writer
}

// OpenRejected opens the rejected-lines file for a run: a new run starts it empty; a
// resumed run keeps the rejections its state counts (the first st.RejectedBytes) and
// drops what a killed process wrote after its last checkpoint, whose lines are sent
// again.
func OpenRejected(path string, st *State) (*RejectedFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the rejected-lines file: %w", err)
	}
	keep := int64(0)
	if st.Runs > 0 {
		keep = st.RejectedBytes
	}
	if info, err := f.Stat(); err == nil && info.Size() < keep {
		f.Close()
		return nil, fmt.Errorf("the rejected-lines file %s is shorter (%d bytes) than the state file says it was (%d): it was changed since; restore it, or start the import afresh", path, info.Size(), keep)
	}
	if err := f.Truncate(keep); err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the rejected-lines file: %w", err)
	}
	if _, err := f.Seek(keep, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the rejected-lines file: %w", err)
	}
	return &RejectedFile{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (r *RejectedFile) Write(p []byte) (int, error) { return r.w.Write(p) }
func (r *RejectedFile) Flush() error                { return r.w.Flush() }
func (r *RejectedFile) Sync() error                 { return r.f.Sync() }

// Close flushes and closes the file.
func (r *RejectedFile) Close() error {
	err := r.w.Flush()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	return err
}
