package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HedgingMode says how reads are hedged across regions.
type HedgingMode string

// Hedging modes.
const (
	HedgingOff       HedgingMode = "off"
	HedgingThreshold HedgingMode = "threshold" // next region after a fixed threshold, then every step
	HedgingAdaptive  HedgingMode = "adaptive"  // threshold learned from the first region's latency
)

// Hedging is the availability strategy for reads. Zero durations and counts mean "not
// set": the hedging code supplies its own defaults.
type Hedging struct {
	Mode       HedgingMode
	Threshold  time.Duration // > 0 when set
	Step       time.Duration // >= 0; 0 starts every remaining region at the threshold
	MaxRegions int           // >= 1 when set
	// BudgetPercent caps extra requests as a percentage of traffic (the file says "10%").
	BudgetPercent float64
}

// WriteRetryPolicy says whether writes that may or may not have been applied are retried.
type WriteRetryPolicy string

// Write retry policies, as written in the profiles file. The environment variable
// COSMOSCTL_WRITE_RETRY_POLICY uses the SDK spelling (NO_RETRIES, WITH_RETRIES,
// WITH_TRACKING_ID); both spellings are accepted everywhere.
const (
	WriteRetriesOff        WriteRetryPolicy = "off"
	WriteRetriesOn         WriteRetryPolicy = "retries"
	WriteRetriesTrackingID WriteRetryPolicy = "tracking-id"
)

// WriteRetries is the write retry configuration.
type WriteRetries struct {
	Policy WriteRetryPolicy
}

// Connection modes: through the account's gateway, straight to the replicas, or
// through the regional Gateway 2.0 ("thin client") proxies the account advertises.
const (
	ConnectionGateway  = "gateway"
	ConnectionDirect   = "direct"
	ConnectionGateway2 = "gateway2"
)

func parseConnectionMode(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case ConnectionGateway, ConnectionDirect, ConnectionGateway2:
		return v, nil
	}
	return "", fmt.Errorf("must be gateway, direct or gateway2, not %q", s)
}

// Authentication: the account key (master-key signatures), or Azure AD (Microsoft
// Entra ID) tokens, which accounts that disable keys require.
const (
	AuthKey = "key"
	AuthAAD = "aad"
)

func parseAuth(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case AuthKey, AuthAAD:
		return v, nil
	}
	return "", fmt.Errorf("must be key or aad, not %q", s)
}

// Output formats. NDJSON is JSON with one record per line: query streams its items so, one
// per line as its pages arrive; every other command prints its JSON as it does for
// OutputJSON (probe's is NDJSON already), so that a profile or COSMOSCTL_OUTPUT of ndjson
// serves every command. TSV is a table as tab-separated values, for awk and cut; a
// command that prints no table (an item command) prints as it does for OutputTable, so
// that a profile or COSMOSCTL_OUTPUT of tsv serves every command too.
const (
	OutputTable  = "table"
	OutputJSON   = "json"
	OutputNDJSON = "ndjson"
	OutputTSV    = "tsv"
)

// JSONOutput reports whether an output format is JSON of either kind.
func JSONOutput(format string) bool { return format == OutputJSON || format == OutputNDJSON }

// The value checks below return errors phrased to follow the name of the setting
// ("--e2e-timeout", "COSMOSCTL_E2E_TIMEOUT", "profile prod: e2e_timeout"), which the caller
// puts in front, so that every source of a value gets the same message.

func parseEndpoint(s string) (string, error) {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("must be a URL such as https://myaccount.documents.azure.com:443/, not %q", s)
	}
	return s, nil
}

// checkKey rejects a key that cannot be an account key without ever quoting it.
func checkKey(key string) error {
	if key == "" {
		return errors.New("is empty: copy the primary or secondary key from the portal (Keys blade)")
	}
	if _, err := base64.StdEncoding.DecodeString(key); err != nil {
		return errors.New("is not valid base64: copy the primary or secondary key from the portal (Keys blade) unchanged")
	}
	return nil
}

// parseDuration parses a duration setting; key decides what range is valid.
func parseDuration(key, s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("must be a duration such as \"5s\" or \"300ms\", not %q", s)
	}
	return d, checkDuration(key, d)
}

func checkDuration(key string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("must not be negative (got %s)", d)
	}
	// A zero threshold would hedge every read to every region at once: the design
	// requires > 0, and "off" is the way to disable hedging.
	if key == "hedging.threshold" && d == 0 {
		return errors.New(`must be greater than 0 (use hedging.mode = "off" to disable hedging)`)
	}
	return nil
}

// parseOnOff reads a switch: on/off, true/false, yes/no, 1/0.
func parseOnOff(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("must be on or off (or true/false), not %q", s)
}

func parseOutput(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case OutputTable, OutputJSON, OutputNDJSON, OutputTSV:
		return v, nil
	}
	return "", fmt.Errorf("must be table, json, ndjson or tsv, not %q", s)
}

func parseHedgingMode(s string) (HedgingMode, error) {
	switch v := HedgingMode(strings.ToLower(strings.TrimSpace(s))); v {
	case HedgingOff, HedgingThreshold, HedgingAdaptive:
		return v, nil
	}
	return "", fmt.Errorf("must be threshold, adaptive or off, not %q", s)
}

func checkMaxRegions(n int) error {
	if n < 1 {
		return fmt.Errorf("must be at least 1, not %d", n)
	}
	return nil
}

func parseMaxRegions(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("must be a whole number, not %q", s)
	}
	return n, checkMaxRegions(n)
}

// parseBudget reads a percentage of traffic. The % sign is required so that "0.1" is not
// read as a tenth of a percent by one person and as 10% by another.
func parseBudget(s string) (float64, error) {
	v := strings.TrimSpace(s)
	num, ok := strings.CutSuffix(v, "%")
	p, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil || p < 0 || p > 100 {
		return 0, fmt.Errorf("must be a percentage between 0%% and 100%% such as \"10%%\", not %q", s)
	}
	return p, nil
}

func parseWriteRetryPolicy(s string) (WriteRetryPolicy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off", "no_retries":
		return WriteRetriesOff, nil
	case "retries", "with_retries":
		return WriteRetriesOn, nil
	case "tracking-id", "with_tracking_id":
		return WriteRetriesTrackingID, nil
	}
	return "", fmt.Errorf("must be off, retries or tracking-id (or NO_RETRIES, WITH_RETRIES, WITH_TRACKING_ID), not %q", s)
}

// splitList reads a comma-separated list of region names.
func splitList(s string) []string {
	return cleanList(strings.Split(s, ","))
}

// cleanList trims names and drops empty ones, so that "East US, West US," is two regions.
func cleanList(in []string) []string {
	out := []string{}
	for _, v := range in {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
