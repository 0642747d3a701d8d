package cmd

import (
	"context"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

var update = flag.Bool("update", false, "rewrite golden files")

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Fatalf("output differs from %s (rerun with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// newRaw returns a function that sends signed requests straight to the emulator.
func newRaw(t *testing.T, srv *emulator.Server) func(method, path, body string) *cosmos.Response {
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	return func(method, path, body string) *cosmos.Response {
		t.Helper()
		req := &cosmos.Request{Method: method, Path: path, Header: http.Header{}}
		if body != "" {
			req.Body = []byte(body)
		}
		resp, err := tr.Do(context.Background(), srv.Endpoint(), req)
		if resp == nil {
			t.Fatal(err)
		}
		return resp
	}
}
