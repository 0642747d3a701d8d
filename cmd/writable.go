package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// An import, an export or a change feed run writes its state and output files as it
// goes, and some only at the end: a path that cannot be written was found after the
// work, and after the RU it cost (an export had written 9.6 MB when its --state could
// not be saved). checkWritable finds it before the first request instead, as the other
// bad flags are found.

// outputPath is a file a command will write, named by the flag that gave it.
type outputPath struct {
	flag string // "--state", "--output-file", "--rejected"
	path string
	// origin says where the path came from when the flag did not give it: "the
	// default", "named by the state file".
	origin string
	// replaced: the file is saved atomically, a temporary file in its directory renamed
	// over it (the state files), so it is the directory that must take new files.
	// Otherwise the file itself is opened for writing (created when missing).
	replaced bool
}

// checkWritable says, as a usage error naming the flag, the path, the problem and the
// fix, the first of paths that cannot be written. It leaves nothing behind: a file it
// creates to try is removed, and an existing file is opened without truncation, so a
// state or an output being resumed is untouched.
func checkWritable(paths ...outputPath) error {
	for _, p := range paths {
		if p.path == "" {
			continue
		}
		if problem := writeProblem(p); problem != "" {
			name := p.path
			if p.origin != "" {
				name += " (" + p.origin + ")"
			}
			return usageErrorf("%s %s cannot be written: %s", p.flag, name, problem)
		}
	}
	return nil
}

// writeProblem is why p cannot be written, and what to do about it; "" when it can.
func writeProblem(p outputPath) string {
	fi, err := os.Stat(p.path)
	switch {
	case err == nil && fi.IsDir():
		return "it is a directory: give a file name"
	case err == nil && !fi.Mode().IsRegular() && !p.replaced:
		// A pipe or a device (/dev/stdout): opening it to try could block, or end
		// what a reader reads. The command's own open says what is wrong, if anything.
		return ""
	}
	dir := filepath.Dir(p.path)
	if problem := dirProblem(dir); problem != "" {
		return problem
	}
	if p.replaced {
		// What the save does first: a temporary file beside the state.
		f, err := os.CreateTemp(dir, "."+filepath.Base(p.path)+".check-*")
		if err != nil {
			return createProblem(dir, err)
		}
		f.Close()
		os.Remove(f.Name())
		return ""
	}
	if err == nil {
		f, err := os.OpenFile(p.path, os.O_WRONLY, 0)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return "the file is not writable (permission denied): make it writable (chmod u+w), or give another file"
			}
			return fmt.Sprintf("%v: give another file", unwrapPath(err))
		}
		f.Close()
		return ""
	}
	f, err := os.OpenFile(p.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return "" // made meanwhile, by someone else: not ours to remove
	}
	if err != nil {
		return createProblem(dir, err)
	}
	f.Close()
	os.Remove(p.path)
	return ""
}

// dirProblem is why dir cannot hold a file because it is not a directory, or not
// there; "" when it is a directory.
func dirProblem(dir string) string {
	fi, err := os.Stat(dir)
	if err == nil && fi.IsDir() {
		return ""
	}
	if err == nil {
		return fmt.Sprintf("%s is a file, not a directory: give a path in a directory", dir)
	}
	// The nearest ancestor that exists says which: a missing directory, or a file
	// where a directory should be.
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			if !fi.IsDir() {
				return fmt.Sprintf("%s is a file, not a directory: give a path in a directory", d)
			}
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("the directory %s does not exist: create it (mkdir -p %s), or give a path in a directory that exists", dir, shellQuote(dir))
	}
	return fmt.Sprintf("the directory %s cannot be used (%v): give a path in another directory", dir, unwrapPath(err))
}

// createProblem is why a file could not be created in dir (permission denied, a
// read-only file system, a directory that takes no files such as /sys).
func createProblem(dir string, err error) string {
	return fmt.Sprintf("no file can be created in %s (%v): give a path in a directory you can write to", dir, unwrapPath(err))
}
