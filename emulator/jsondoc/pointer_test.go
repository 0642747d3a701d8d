package jsondoc

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParsePointerUnescapesSegments(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"/a", []string{"a"}},
		{"/a/b/0", []string{"a", "b", "0"}},
		{"/a~1b", []string{"a/b"}},
		{"/a~0b", []string{"a~b"}},
		{"/~01", []string{"~1"}},
		{"/~10", []string{"/0"}},
		{"/a//b", []string{"a", "", "b"}},
		{"/a/", []string{"a", ""}},
		{"/é/😀", []string{"é", "😀"}},
	}
	for _, tt := range tests {
		got, err := ParsePointer(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParsePointer(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if f := formatPointer(got); f != tt.in {
			t.Errorf("formatPointer(%q) = %q, want %q", got, f, tt.in)
		}
	}
}

func TestParsePointerRejectsInvalidPaths(t *testing.T) {
	tests := []struct{ in, wantMsg string }{
		{"", "patch path must name a property, e.g. /a/b"},
		{"/", "patch path must name a property, e.g. /a/b"},
		{"a/b", `must start with "/"`},
		{"/a~", "invalid escape"},
		{"/a~2", "invalid escape"},
		{"/~a", "invalid escape"},
	}
	for _, tt := range tests {
		_, err := ParsePointer(tt.in)
		var pe *PatchError
		if !errors.As(err, &pe) {
			t.Errorf("ParsePointer(%q) = %v, want *PatchError", tt.in, err)
			continue
		}
		if !strings.Contains(pe.Msg, tt.wantMsg) {
			t.Errorf("ParsePointer(%q) = %q, want it to contain %q", tt.in, pe.Msg, tt.wantMsg)
		}
	}
}
