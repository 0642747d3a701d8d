package gosuite

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// azcosmosPath is the module whose emulator tests are the judge.
const azcosmosPath = "github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

// suite is the azcosmos module copied out of the module cache, with its test binary
// compiled and the emulator tests it declares.
type suite struct {
	version string   // the azcosmos version, as the main go.mod requires it
	dir     string   // the copy: where the test binary runs, as `go test` would run it
	binary  string   // the compiled test binary (go test -c)
	tests   []test   // the emulator tests, in file then declaration order
	env     []string // the environment the go commands ran with
}

// test is one emulator test: its name and the file that declares it.
type test struct {
	name, file string
}

// errToolchain marks what a missing module or a compile failure prevents: the suite
// cannot be judged, which skips the run unless COSMOSCTL_SDKCOMPAT=required.
type errToolchain struct{ err error }

func (e errToolchain) Error() string { return e.err.Error() }

// prepare copies the module into dir, downloads what its go.mod needs, compiles its
// test binary and lists its emulator tests. repo is the cosmosctl checkout, whose
// go.mod names the azcosmos version.
func prepare(ctx context.Context, repo, dir string) (*suite, error) {
	env := goEnv()
	out, err := goCommand(ctx, repo, os.Environ(), time.Minute, "list", "-m", "-f", "{{.Dir}}\t{{.Version}}", azcosmosPath)
	if err != nil {
		return nil, errToolchain{fmt.Errorf("finding %s in the module cache (run `go mod download` at the repository root): %v", azcosmosPath, err)}
	}
	src, version, _ := strings.Cut(strings.TrimSpace(out), "\t")
	if src == "" {
		return nil, errToolchain{fmt.Errorf("%s@%s is not in the module cache: run `go mod download` at the repository root", azcosmosPath, version)}
	}
	s := &suite{version: version, dir: filepath.Join(dir, "azcosmos"), env: env}
	if err := copyTree(src, s.dir); err != nil {
		return nil, err
	}
	// The suite's own go.mod would pull older azcore and azidentity than the main
	// module's; testdata/module has the main module's versions and testify.
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join("testdata", "module", name))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(s.dir, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	if _, err := goCommand(ctx, s.dir, env, 3*time.Minute, "mod", "download"); err != nil {
		return nil, errToolchain{fmt.Errorf("downloading the suite's test dependencies (testify): %v", err)}
	}
	// One compile for all tests: each then runs the binary, as `go test -run` does after
	// building it. Cold, on a loaded two-core machine, this is the longest step.
	s.binary = filepath.Join(dir, "azcosmos.test")
	if _, err := goCommand(ctx, s.dir, env, 6*time.Minute, "test", "-c", "-o", s.binary, "."); err != nil {
		return nil, errToolchain{fmt.Errorf("compiling the azcosmos tests: %v", err)}
	}
	declared, err := emulatorTests(s.dir)
	if err != nil {
		return nil, err
	}
	listed, err := listTests(ctx, s)
	if err != nil {
		return nil, err
	}
	for _, tc := range declared {
		if !slices.Contains(listed, tc.name) {
			return nil, fmt.Errorf("%s declares %s, which `%s -test.list` does not list", tc.file, tc.name, filepath.Base(s.binary))
		}
	}
	s.tests = declared
	return s, nil
}

// goEnv is the environment of the go commands run in the copy: the module is edited
// freely (GOFLAGS=-mod=mod overrides CI's -mod=readonly), outside any workspace, with
// GOPROXY and the caches as the environment has them.
func goEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "GOFLAGS" && name != "GOWORK" {
			env = append(env, kv)
		}
	}
	return append(env, "GOFLAGS=-mod=mod", "GOWORK=off")
}

// goCommand runs the go command in dir, bounded by limit, and returns its stdout.
func goCommand(ctx context.Context, dir string, env []string, limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("not done within %v", limit)
		}
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// copyTree copies the module's files; the module cache keeps them read-only, the copy
// must be writable (go.mod and go.sum are replaced).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// emulatorTests reads the Test functions the module's emulator_*_test.go files declare:
// the suite Microsoft runs against its emulator with EMULATOR=1. The package's other
// tests need no emulator and are not run.
func emulatorTests(dir string) ([]test, error) {
	files, err := filepath.Glob(filepath.Join(dir, "emulator_*_test.go"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no emulator_*_test.go in %s", dir)
	}
	slices.Sort(files)
	var tests []test
	fset := token.NewFileSet()
	for _, f := range files {
		parsed, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range parsed.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" {
				tests = append(tests, test{name: fn.Name.Name, file: filepath.Base(f)})
			}
		}
	}
	return tests, nil
}

// listTests is what the test binary lists (go test -list), to check that every declared
// test is one it runs.
func listTests(ctx context.Context, s *suite) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.binary, "-test.list", ".")
	cmd.Dir, cmd.Env = s.dir, s.env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s -test.list: %v", filepath.Base(s.binary), err)
	}
	return strings.Fields(string(out)), nil
}
