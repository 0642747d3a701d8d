package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seeAlso returns the SEE ALSO line of a man page.
func seeAlso(t *testing.T, page string) string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), ".SH SEE ALSO\n")
	if !ok {
		t.Fatalf("%s has no SEE ALSO", page)
	}
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

func TestTheManPagesSeeAlsoTheHelpTopics(t *testing.T) {
	dir := t.TempDir()
	if err := writeMan(dir); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, tp := range topics(docTree()) {
		names = append(names, tp.Name())
	}
	if len(names) < 4 {
		t.Fatalf("help topics: %q", names)
	}
	root := seeAlso(t, filepath.Join(dir, "man1", "cosmosctl.1"))
	if !strings.Contains(root, `\fBcosmosctl-read(1)\fP`) {
		t.Errorf("cosmosctl(1) SEE ALSO lost the commands: %s", root)
	}
	for _, name := range names {
		ref := `\fBcosmosctl-` + name + `(7)\fP`
		if !strings.Contains(root, ref) {
			t.Errorf("cosmosctl(1) SEE ALSO does not name %s: %s", ref, root)
		}
		topic := seeAlso(t, filepath.Join(dir, "man7", "cosmosctl-"+name+".7"))
		if !strings.Contains(topic, `\fBcosmosctl(1)\fP`) || strings.Contains(topic, ref) {
			t.Errorf("cosmosctl-%s(7) SEE ALSO: %s", name, topic)
		}
		for _, other := range names {
			if other != name && !strings.Contains(topic, `\fBcosmosctl-`+other+`(7)\fP`) {
				t.Errorf("cosmosctl-%s(7) SEE ALSO does not name cosmosctl-%s(7): %s", name, other, topic)
			}
		}
	}
	// What is checked in is what this writes (CI also regenerates and compares).
	for _, page := range []string{"man1/cosmosctl.1", "man7/cosmosctl-exit-codes.7"} {
		want, _ := os.ReadFile(filepath.Join(dir, page))
		got, err := os.ReadFile(filepath.Join("..", "..", "man", page))
		if err != nil || string(got) != string(want) {
			t.Errorf("man/%s is not what go generate writes: run go generate ./... (%v)", page, err)
		}
	}
}
