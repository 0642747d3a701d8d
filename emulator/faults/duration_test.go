package faults

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDurationParsesHumanForms(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "300ms", want: 300 * time.Millisecond},
		{in: "1.5s", want: 1500 * time.Millisecond},
		{in: "2m", want: 2 * time.Minute},
		{in: " 0s ", want: 0},
		{in: "-5ms", wantErr: "duration must not be negative: -5ms"},
		{in: "5", wantErr: `invalid duration "5"`},
		{in: "", wantErr: `invalid duration ""`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var d Duration
			err := d.UnmarshalText([]byte(tt.in))
			wantErrContaining(t, err, tt.wantErr)
			if tt.wantErr == "" && time.Duration(d) != tt.want {
				t.Fatalf("got %v, want %v", time.Duration(d), tt.want)
			}
		})
	}
}

func TestDurationRoundTripsThroughJSONAsString(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{300 * time.Millisecond, `"300ms"`},
		{1500 * time.Millisecond, `"1.5s"`},
		{2 * time.Minute, `"2m0s"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			b, err := json.Marshal(Duration(tt.d))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("marshal: got %s, want %s", b, tt.want)
			}
			var back Duration
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if time.Duration(back) != tt.d {
				t.Fatalf("round trip: got %v, want %v", time.Duration(back), tt.d)
			}
		})
	}
}

func TestDurationRejectsNegativeInJSON(t *testing.T) {
	var r struct {
		After Duration `json:"after"`
	}
	err := json.Unmarshal([]byte(`{"after":"-5ms"}`), &r)
	wantErrContaining(t, err, "duration must not be negative: -5ms")
}
