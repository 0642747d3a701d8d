package shard

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == IndexEnv {
				return v
			}
			return ""
		}
	}
	cases := []struct {
		name, flag, env string
		want            Spec
		err             string // part of the error; "" for none
	}{
		{name: "index of count", flag: "2/4", want: Spec{2, 4}},
		{name: "the only shard", flag: "0/1", want: Spec{0, 1}},
		{name: "spaces are forgiven", flag: " 1 / 3 ", want: Spec{1, 3}},
		{name: "auto reads the Indexed Job's index", flag: "auto/8", env: "5", want: Spec{5, 8}},
		{name: "an empty index reads the Indexed Job's index", flag: "/8", env: "0", want: Spec{0, 8}},
		{name: "AUTO in any case", flag: "Auto/2", env: "1", want: Spec{1, 2}},
		{name: "a given index ignores the environment", flag: "1/2", env: "0", want: Spec{1, 2}},
		{name: "no slash", flag: "3", err: "want i/N"},
		{name: "empty", flag: "", err: "want i/N"},
		{name: "zero shards", flag: "0/0", err: "at least 1"},
		{name: "negative count", flag: "0/-2", err: "at least 1"},
		{name: "count not a number", flag: "0/four", err: "not a whole number"},
		{name: "index equal to the count", flag: "4/4", err: "outside 0..3"},
		{name: "negative index", flag: "-1/4", err: "outside 0..3"},
		{name: "index not a number", flag: "x/4", err: "not a whole number"},
		{name: "auto without the Indexed Job's index", flag: "auto/4", err: "JOB_COMPLETION_INDEX is not set"},
		{name: "the Indexed Job's index beyond the count", flag: "auto/4", env: "4", err: "(from JOB_COMPLETION_INDEX) is outside 0..3"},
		{name: "the Indexed Job's index not a number", flag: "/4", env: "a", err: "not a whole number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseSpec(c.flag, env(c.env))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseSpec(%q) = %v, %v; want an error with %q", c.flag, got, err, c.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error is not one line: %q", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseSpec(%q) = %v, %v; want %v", c.flag, got, err, c.want)
			}
		})
	}
	if _, err := ParseSpec("auto/2", nil); err == nil {
		t.Fatal("auto with no environment: want an error")
	}
}
