package output

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0ms"},
		{20 * time.Microsecond, "<0.1ms"},
		{400 * time.Microsecond, "0.4ms"},
		{949 * time.Microsecond, "0.9ms"},
		{960 * time.Microsecond, "1ms"},
		{12 * time.Millisecond, "12ms"},
		{12400 * time.Microsecond, "12ms"},
		{300 * time.Millisecond, "300ms"},
		{999 * time.Millisecond, "999ms"},
		{999600 * time.Microsecond, "1.00s"},
		{1200 * time.Millisecond, "1.20s"},
		{59 * time.Second, "59.00s"},
		{125 * time.Second, "2m5s"},
		{-300 * time.Millisecond, "-300ms"},
	}
	for _, tc := range cases {
		if got := HumanDuration(tc.d); got != tc.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
