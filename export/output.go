package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// OpenOutput opens the output file of an export. A first run (resumed nil) creates it,
// or empties one that is there, as a shell's > does. A resumed run finds the file as
// the last run left it, which holds at least the bytes its last checkpoint counted (the
// file is synced before the state is saved): it cuts the file there, dropping what was
// written after the checkpoint, which the run writes again from the checkpoint's
// position, and writes on at its end.
func OpenOutput(path string, resumed *State) (*os.File, error) {
	if resumed == nil {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) && resumed.OutputBytes == 0 {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the output file %s is gone, and its state file says it held %d bytes: delete the state file to start the export over", path, resumed.OutputBytes)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < resumed.OutputBytes {
		err = fmt.Errorf("the output file %s holds %d bytes, fewer than the %d its state file counted: it is not the file this export wrote; delete the state file to start the export over", path, fi.Size(), resumed.OutputBytes)
	}
	if err == nil {
		err = f.Truncate(resumed.OutputBytes)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekEnd)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
