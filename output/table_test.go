package output

import (
	"bytes"
	"strings"
	"testing"
)

func TestTablePlain(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, Styles{}, "REGION", "ROLE", "LATENCY")
	tb.AlignRight(2)
	tb.Append("West US", "write", "12ms")
	tb.Append("North Europe", "read", "140ms")
	tb.Append("East Asia", "read") // short rows are padded
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"REGION         ROLE    LATENCY\n" +
		"West US        write      12ms\n" +
		"North Europe   read      140ms\n" +
		"East Asia      read\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestTableBoldHeaderOnlyWithColour(t *testing.T) {
	var plain, colour bytes.Buffer
	for _, c := range []struct {
		buf *bytes.Buffer
		st  Styles
	}{{&plain, NewStyles(&plain, false, false)}, {&colour, NewStyles(&colour, true, false)}} {
		tb := NewTable(c.buf, c.st, "NAME", "VALUE")
		tb.Append("profile", c.st.Good("prod"))
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("colour off, escapes in %q", plain.String())
	}
	if !strings.Contains(colour.String(), "\x1b[1mNAME") {
		t.Errorf("colour on, header not bold: %q", colour.String())
	}
	if got := stripANSI(colour.String()); got != plain.String() {
		t.Errorf("colour changed the layout:\n%q\nvs\n%q", got, plain.String())
	}
	for line := range strings.Lines(colour.String()) {
		if strings.HasSuffix(stripANSI(strings.TrimSuffix(line, "\n")), " ") {
			t.Errorf("trailing blanks in %q", line)
		}
	}
}

func TestTableEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := NewTable(&buf, Styles{}).Render(); err != nil || buf.Len() != 0 {
		t.Fatalf("no columns: err %v, output %q", err, buf.String())
	}
	if err := NewTable(&buf, Styles{}, "NAME", "VALUE").Render(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "NAME   VALUE\n" {
		t.Errorf("header only: %q", buf.String())
	}
}
