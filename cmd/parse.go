package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// parsePartitionKey reads --pk: a JSON value ("tenant-1" quoted, 42, true, null), a JSON
// array for a hierarchical key (["acme", "user-7"]), or else a plain string, so that the
// common case needs no quoting: --pk tenant-1.
func parsePartitionKey(s string) (cosmos.PartitionKey, error) {
	if off, bad := invalidUTF8(s); bad {
		return nil, usageErrorf("--pk is not valid UTF-8 (byte offset %d): give the partition key as UTF-8 text", off)
	}
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "[") {
		pk, err := cosmos.ParsePartitionKeyJSON(t)
		if err != nil {
			return nil, usageErrorf("--pk %s: %v; a hierarchical key is a JSON array such as '[\"acme\",\"user-7\"]'", s, err)
		}
		return pk, nil
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		switch v.(type) {
		case map[string]any:
			return nil, usageErrorf("--pk %s: a partition key value is a string, number, boolean or null, not an object", s)
		}
		pk, err := cosmos.PK(v)
		if err != nil {
			return nil, usageErrorf("--pk %s: %v", s, err)
		}
		return pk, nil
	}
	return cosmos.PartitionKey{{Kind: cosmos.KindString, Str: s}}, nil
}

// readDocument reads -f FILE, or standard input for "-".
func readDocument(path string, stdin io.Reader) ([]byte, error) {
	data, _, err := readScannedDocument(path, stdin)
	return data, err
}

// readScannedDocument is readDocument with the document's scan (engine.ScanDocument):
// an object the scan accepts is valid UTF-8 and valid JSON, and is handed to the engine
// with its scan (Operation.Document), read once; any other document is checked as
// before, for the same message, and has no scan.
func readScannedDocument(path string, stdin io.Reader) ([]byte, *engine.Document, error) {
	if path == "" {
		return nil, nil, usageErrorf("give the document with -f FILE, or -f - to read it from standard input")
	}
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, usageErrorf("file %s does not exist: check the path given to -f", path)
		}
		return nil, nil, usageErrorf("cannot read %s: %v", path, err)
	}
	// Windows editors and PowerShell's Out-File write a byte order mark; it is not JSON,
	// and says nothing a UTF-8 document needs, so it is dropped.
	bom := 0
	if bytes.HasPrefix(data, utf8BOM) {
		data, bom = data[len(utf8BOM):], len(utf8BOM)
	}
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil, nil, usageErrorf("the document in %s is UTF-16 (it starts with a UTF-16 byte order mark): save it as UTF-8", nameOf(path))
	}
	// What the checks below would pass on: the document without the white space around
	// it (bytes.TrimSpace takes only white space runes, valid UTF-8, off a document
	// whose rest the scan found valid).
	if doc, ok := engine.ScanDocument(bytes.TrimSpace(data)); ok {
		return doc.Bytes(), doc, nil
	}
	// encoding/json would replace invalid bytes with U+FFFD, so that an id or a partition
	// key would be stored as something else than what the file says.
	if off, bad := invalidUTF8(string(data)); bad {
		return nil, nil, usageErrorf("the document in %s is not valid UTF-8 (byte offset %d): save it as UTF-8", nameOf(path), bom+off)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil, usageErrorf("the document in %s is empty", nameOf(path))
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, nil, usageErrorf("the document in %s is not valid JSON: %v", nameOf(path), err)
	}
	return data, nil, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// invalidUTF8 returns the byte offset of the first byte of s that is not valid UTF-8.
func invalidUTF8(s string) (int, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i, true
			}
		}
	}
	return 0, false
}

func nameOf(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}

// patchOp is one operation of a patch request body.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// parsePatchOp reads one --op: "set /a=1", "add /tags/-=\"x\"", "replace /name=alice",
// "incr /count=1", "remove /old", "move /from /to". A value that is not valid JSON is
// taken as a string, like --pk.
func parsePatchOp(s string) (patchOp, error) {
	if off, bad := invalidUTF8(s); bad {
		return patchOp{}, usageErrorf("--op is not valid UTF-8 (byte offset %d)", off)
	}
	verb, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	verb = strings.ToLower(verb)
	rest = strings.TrimSpace(rest)
	bad := func(why string) (patchOp, error) {
		return patchOp{}, usageErrorf("--op %q: %s (forms: 'set /path=VALUE', 'add', 'replace', 'incr' alike, 'remove /path', 'move /from /to')", s, why)
	}
	if !strings.HasPrefix(rest, "/") {
		return bad("the path must start with /")
	}
	switch verb {
	case "remove":
		if strings.ContainsAny(rest, " =") {
			return bad("remove takes a path only")
		}
		return patchOp{Op: verb, Path: rest}, nil
	case "move":
		from, to, ok := strings.Cut(rest, " ")
		to = strings.TrimSpace(to)
		if !ok || !strings.HasPrefix(to, "/") {
			return bad("move takes two paths: 'move /from /to'")
		}
		return patchOp{Op: verb, Path: to, From: from}, nil
	case "set", "add", "replace", "incr":
		path, value, ok := strings.Cut(rest, "=")
		if !ok {
			return bad(verb + " needs a value: '" + verb + " /path=VALUE'")
		}
		raw := json.RawMessage(value)
		if !json.Valid(raw) {
			raw, _ = json.Marshal(value)
		}
		if verb == "incr" {
			var n json.Number
			if json.Unmarshal(raw, &n) != nil {
				return bad("incr needs a number")
			}
		}
		return patchOp{Op: verb, Path: strings.TrimSpace(path), Value: raw}, nil
	}
	return bad(fmt.Sprintf("unknown operation %q", verb))
}

// patchBody builds the PATCH request body from --op and --condition.
func patchBody(ops []string, condition string) ([]byte, error) {
	if len(ops) == 0 {
		return nil, usageErrorf("give at least one --op, e.g. --op 'set /status=\"shipped\"'")
	}
	if len(ops) > 10 {
		return nil, usageErrorf("at most 10 --op are allowed in one patch, got %d", len(ops))
	}
	body := struct {
		Condition  string    `json:"condition,omitempty"`
		Operations []patchOp `json:"operations"`
	}{Condition: condition}
	for _, s := range ops {
		op, err := parsePatchOp(s)
		if err != nil {
			return nil, err
		}
		body.Operations = append(body.Operations, op)
	}
	if c := strings.TrimSpace(condition); c != "" && !strings.HasPrefix(strings.ToLower(c), "from ") {
		return nil, usageErrorf("--condition %q must be of the form 'from c where …'", condition)
	}
	return json.Marshal(body)
}
