//go:build unix

// Package shards_test is issue 28's acceptance test: N = 1, 3, 4 and 7 cosmosctl
// processes read one container as shards (--shard i/N; in one case the index from
// JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job's pods get it), one of them killed
// with -9 and resumed, and `export merge` combines their files: every item exactly
// once. `changes` shards, following while items are written and one of them killed and
// resumed, deliver every change between them.
package shards_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// checkpointEvery is the built binary's checkpoint interval: a tenth of the product's
// second, so that a shard can be killed after a checkpoint and well before its end.
const checkpointEvery = "100ms"

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cosmosctl-shards-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "cosmosctl")
	out, err := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X github.com/cosmosctl/cosmosctl/cmd.exportCheckpointEveryLinked="+checkpointEvery,
		"github.com/cosmosctl/cosmosctl").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building cosmosctl: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// What commands remember between runs is kept out of the developer's cache.
	os.Setenv("COSMOSCTL_STATE_DIR", filepath.Join(dir, "state"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
