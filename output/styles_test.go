package output

import (
	"bytes"
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestColorEnabled(t *testing.T) {
	cases := []struct {
		name    string
		tty     bool
		noColor bool
		env     map[string]string
		want    bool
	}{
		{"a terminal gets colour", true, false, map[string]string{"TERM": "xterm-256color"}, true},
		{"a terminal with no TERM still gets colour", true, false, nil, true},
		{"a pipe never gets colour", false, false, map[string]string{"TERM": "xterm-256color"}, false},
		{"NO_COLOR turns it off", true, false, map[string]string{"NO_COLOR": "1", "TERM": "xterm"}, false},
		{"NO_COLOR turns it off whatever its value", true, false, map[string]string{"NO_COLOR": "false"}, false},
		{"--no-color turns it off", true, true, map[string]string{"TERM": "xterm"}, false},
		{"TERM=dumb turns it off", true, false, map[string]string{"TERM": "dumb"}, false},
		{"--no-color on a pipe is still off", false, true, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ColorEnabled(tc.tty, tc.noColor, env(tc.env)); got != tc.want {
				t.Errorf("ColorEnabled(tty=%v, noColor=%v, %v) = %v, want %v", tc.tty, tc.noColor, tc.env, got, tc.want)
			}
		})
	}
}

func TestUnicodeEnabled(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"no locale at all assumes UTF-8", nil, true},
		{"a UTF-8 LANG", map[string]string{"LANG": "en_US.UTF-8"}, true},
		{"utf8 spelled without the dash", map[string]string{"LANG": "de_DE.utf8"}, true},
		{"the C locale is ASCII", map[string]string{"LANG": "C"}, false},
		{"LC_ALL overrides LANG", map[string]string{"LC_ALL": "POSIX", "LANG": "en_US.UTF-8"}, false},
		{"LC_CTYPE overrides LANG", map[string]string{"LC_CTYPE": "C.UTF-8", "LANG": "C"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnicodeEnabled(env(tc.env)); got != tc.want {
				t.Errorf("UnicodeEnabled(%v) = %v, want %v", tc.env, got, tc.want)
			}
		})
	}
}

func TestStylesEmitEscapesOnlyWithColour(t *testing.T) {
	var buf bytes.Buffer
	paint := func(s Styles) string {
		return s.Bold("a") + s.Faint("b") + s.Good("c") + s.Bad("d") + s.Warn("e")
	}
	if got := paint(NewStyles(&buf, false, false)); got != "abcde" {
		t.Errorf("colour off: %q", got)
	}
	if got := paint(Styles{}); got != "abcde" {
		t.Errorf("zero Styles: %q", got)
	}
	if got := paint(NewStyles(&buf, true, false)); !strings.Contains(got, "\x1b[") {
		t.Errorf("colour on, even into a buffer: %q", got)
	}
	if got := paint(StylesFor(&buf, true, false, env(map[string]string{"NO_COLOR": "1"}))); got != "abcde" {
		t.Errorf("StylesFor with NO_COLOR: %q", got)
	}
}
