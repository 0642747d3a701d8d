package cosmos

import (
	"strings"
	"testing"
)

func TestEveryStatusRowIsWordedOnceAndEveryStatusHasAGeneralRow(t *testing.T) {
	seen := map[[2]int]bool{}
	general := map[int]bool{}
	for _, s := range Statuses {
		k := [2]int{s.Code, s.Sub}
		if seen[k] {
			t.Errorf("%d/%d is listed twice", s.Code, s.Sub)
		}
		seen[k] = true
		if s.Meaning == "" || s.Do == "" {
			t.Errorf("%d/%d has no words", s.Code, s.Sub)
		}
		if s.Sub == -1 {
			general[s.Code] = true
		}
	}
	for _, s := range Statuses {
		if !general[s.Code] {
			t.Errorf("%d has substatus rows but no general row for the substatuses not listed", s.Code)
		}
	}
}

func TestStatusWords(t *testing.T) {
	for _, tc := range []struct {
		code, sub int
		want      string
	}{
		{429, 3200, "RU/s budget was used up"},
		{429, 9999, "too many requests"}, // an unlisted substatus: its status's words
		{404, 1002, "has not caught up with your session"},
		{404, 0, "does not exist"},
		{410, 1002, "split or merged"},
		{403, 3, "the write region moved"},
		{418, 0, "I'm a teapot (no words"}, // unlisted status: HTTP's name, said so
		{200, 0, ""},
		{201, 0, ""},
		{0, 0, ""},
	} {
		got := StatusWords(tc.code, tc.sub)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("StatusWords(%d, %d) = %q, want it to say %q", tc.code, tc.sub, got, tc.want)
		}
	}
}
