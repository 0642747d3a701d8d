package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadDocumentEncoding(t *testing.T) {
	cases := []struct {
		name    string
		data    string
		want    string // the document passed on, when accepted
		wantErr string // a part of the usage error, when refused
	}{
		{"a UTF-8 byte order mark is dropped", "\xEF\xBB\xBF{\"id\":\"a\"}", `{"id":"a"}`, ""},
		{"a byte order mark then spaces is dropped", "\xEF\xBB\xBF \n{\"id\":\"a\"}\n", `{"id":"a"}`, ""},
		{"a document without a mark is unchanged", `{"id":"café"}`, `{"id":"café"}`, ""},
		{"invalid UTF-8 in a value names its byte offset", "{\"id\":\"a\xFFb\"}", "", "not valid UTF-8 (byte offset 8)"},
		{"invalid UTF-8 after a mark counts from the file's start", "\xEF\xBB\xBF{\"id\":\"\xC3\"}", "", "not valid UTF-8 (byte offset 10)"},
		{"a UTF-16 document is refused as UTF-16", "\xFF\xFE{\x00}\x00", "", "UTF-16"},
		{"a mark alone is an empty document", "\xEF\xBB\xBF", "", "is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(from string, got []byte, err error) {
				t.Helper()
				if c.wantErr == "" {
					if err != nil || string(got) != c.want {
						t.Errorf("%s: %q, %v; want %q", from, got, err, c.want)
					}
					return
				}
				var ue *UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("%s: %v; want a usage error with %q", from, err, c.wantErr)
				}
			}
			got, err := readDocument("-", strings.NewReader(c.data))
			check("stdin", got, err)
			path := filepath.Join(t.TempDir(), "doc.json")
			if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err = readDocument(path, nil)
			check("file", got, err)
		})
	}
}

func TestInvalidUTF8InFlagsIsAUsageError(t *testing.T) {
	if _, err := parsePartitionKey("t\xFF1"); err == nil || !strings.Contains(err.Error(), "byte offset 1") {
		t.Errorf("--pk with an invalid byte: %v", err)
	}
	if _, err := parsePatchOp("set /a=\"\xFF\""); err == nil || !strings.Contains(err.Error(), "byte offset 8") {
		t.Errorf("--op with an invalid byte: %v", err)
	}
	if _, err := parsePartitionKey("café"); err != nil {
		t.Errorf("--pk café: %v", err)
	}
}

func TestDocumentEncodingAndMissingPartitionKeyEndToEnd(t *testing.T) {
	testAccount(t)
	steps := []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   string // in stdout (code 0) or stderr
	}{
		{"a document with a byte order mark is created", "\xEF\xBB\xBF{\"id\":\"bom\",\"pk\":\"t1\"}", []string{"create", "-f", "-"}, ExitOK, `"id":"bom"`},
		{"and reads back", "", []string{"read", "bom", "--pk", "t1"}, ExitOK, `"id":"bom"`},
		{"invalid UTF-8 in the id is refused", "{\"id\":\"a\xE9\",\"pk\":\"t1\"}", []string{"create", "-f", "-"}, ExitUsage, "byte offset 8"},
		{"nothing was stored under a replaced id", "", []string{"read", "a\uFFFD", "--pk", "t1"}, ExitNotFound, ""},
		{"invalid UTF-8 in an id argument is refused", "", []string{"read", "a\xE9", "--pk", "t1"}, ExitUsage, "byte offset 1"},
		{"a document without the partition key property is refused", `{"id":"nopk","total":1}`, []string{"create", "-f", "-"}, ExitUsage, "partition key path /pk"},
		{"upsert refuses it too", `{"id":"nopk"}`, []string{"upsert", "-f", "-"}, ExitUsage, "--pk '[{}]'"},
		{"nothing was stored under the none key", "", []string{"read", "nopk", "--pk", "[{}]"}, ExitNotFound, ""},
		{"--pk '[{}]' stores it under the none key", `{"id":"nopk"}`, []string{"create", "-f", "-", "--pk", "[{}]"}, ExitOK, `"id":"nopk"`},
		{"which --pk '[{}]' reads back", "", []string{"read", "nopk", "--pk", "[{}]"}, ExitOK, `"id":"nopk"`},
	}
	for _, s := range steps {
		r := cosmosctl(t, s.stdin, s.args...)
		if r.code != s.code {
			t.Errorf("%s: exit %d, want %d (%s%s)", s.name, r.code, s.code, r.out, r.errOut)
			continue
		}
		where := r.out
		if s.code != ExitOK {
			where = r.errOut
		}
		if !strings.Contains(where, s.out) {
			t.Errorf("%s: %q does not contain %q", s.name, where, s.out)
		}
	}
}

func TestItemHelpDocumentsTheNoneKey(t *testing.T) {
	for _, c := range []string{"read", "create"} {
		r := cosmosctl(t, "", c, "--help")
		if r.code != 0 || !strings.Contains(r.out, "--pk '[{}]' is the none key, for items without the") {
			t.Errorf("%s --help does not document the none key:\n%s", c, r.out)
		}
	}
}
