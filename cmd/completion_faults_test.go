package cmd

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFaultRemoveCompletesTheRunningEmulatorsFaultIDs(t *testing.T) {
	isolate(t)
	endpoint, _, _ := startEmulatorCmd(t)
	if got, _ := complete(t, "emulator", "fault", "remove", "--endpoint", endpoint, ""); len(got) != 0 {
		t.Errorf("no faults yet: %q", got)
	}
	for _, args := range [][]string{
		{"--region", "West US", "--op", "reads", "--effect", "status", "--status", "503"},
		{"--region", "East US", "--op", "writes", "--effect", "hang"},
	} {
		if r := cosmosctl(t, "", append([]string{"emulator", "fault", "add", "--endpoint", endpoint}, args...)...); r.code != 0 {
			t.Fatalf("fault add %q: %d %s", args, r.code, r.errOut)
		}
	}
	got, directive := complete(t, "emulator", "fault", "remove", "--endpoint", endpoint, "")
	if !slices.Equal(got, []string{"f1", "f2"}) || directive != ":4" {
		t.Errorf("fault ids: %q %s, want f1 f2 and no file completion", got, directive)
	}
	r := cosmosctl(t, "", "__complete", "emulator", "fault", "remove", "--endpoint", endpoint, "")
	if !strings.Contains(r.out, "f1\tstatus West US") || !strings.Contains(r.out, "f2\thang East US") {
		t.Errorf("the ids carry their effect and region as descriptions:\n%s", r.out)
	}
	if got, _ := complete(t, "emulator", "fault", "remove", "--endpoint", endpoint, "f1", ""); len(got) != 0 {
		t.Errorf("remove takes one id: %q after f1", got)
	}
	if r := cosmosctl(t, "", "emulator", "fault", "remove", "--endpoint", endpoint, "f1"); r.code != 0 {
		t.Fatalf("fault remove f1: %d %s", r.code, r.errOut)
	}
	if got, _ := complete(t, "emulator", "fault", "remove", "--endpoint", endpoint, ""); !slices.Equal(got, []string{"f2"}) {
		t.Errorf("after removing f1: %q", got)
	}
}

func TestFaultIDCompletionGivesUpQuickly(t *testing.T) {
	isolate(t)
	// Nothing listening: no completions, no error on stdout.
	if got, directive := complete(t, "emulator", "fault", "remove", "--endpoint", "http://127.0.0.1:1", ""); len(got) != 0 || directive != ":4" {
		t.Errorf("no emulator: %q %s", got, directive)
	}
	// An endpoint that accepts and never answers: the completion's timeout, not the shell's patience.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	if got, _ := complete(t, "emulator", "fault", "remove", "--endpoint", "http://"+ln.Addr().String(), ""); len(got) != 0 {
		t.Errorf("hung emulator: %q", got)
	}
	if d := time.Since(start); d > completionTimeout+3*time.Second {
		t.Errorf("the completion took %v; its timeout is %v", d, completionTimeout)
	}
}
