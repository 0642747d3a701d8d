package shard

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// feedRangeJSON is the SDKs' JSON for an EPK feed range. .NET writes {"Range":{"min":
// "…","max":"…"}} and adds isMinInclusive / isMaxInclusive only when they differ from
// the default [min, max), and reads them as true and false when absent
// (azure-cosmos-dotnet-v3 at 8c53d3595093f5201139b80ee2cf57876725efd3,
// Microsoft.Azure.Cosmos/src/Routing/RangeJsonConverter.cs, read through
// src/Serializer/FeedRange/FeedRangeInternalConverter.cs). Java writes the same object
// plus "isMinInclusive":true, base64url-encoded (JavaBase64).
type feedRangeJSON struct {
	Range *rangeJSON `json:"Range"`
	PK    any        `json:"PK,omitempty"`
	PKID  any        `json:"PKRangeId,omitempty"`
}

type rangeJSON struct {
	Min            *string `json:"min"`
	Max            *string `json:"max"`
	IsMinInclusive *bool   `json:"isMinInclusive,omitempty"`
	IsMaxInclusive *bool   `json:"isMaxInclusive,omitempty"`
}

const feedRangeForms = `a .NET feed range {"Range":{"min":"…","max":"…"}} (FeedRange.ToJsonString) or a Java one (base64url JSON, FeedRange.toString), or cosmosctl ranges --shards N -o json's feed_range / feed_range_java`

// ParseFeedRange reads --feed-range: the .NET JSON {"Range":{"min":..,"max":..}} or Java's
// base64url form; errors name the accepted forms.
func ParseFeedRange(s string) (Interval, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Interval{}, fmt.Errorf("--feed-range is empty: want %s", feedRangeForms)
	}
	raw := []byte(t)
	if !strings.HasPrefix(t, "{") {
		dec, err := decodeBase64(t)
		if err != nil || !bytes.HasPrefix(bytes.TrimSpace(dec), []byte("{")) {
			return Interval{}, fmt.Errorf("--feed-range %s is neither JSON nor base64 JSON: want %s", clip(t), feedRangeForms)
		}
		raw = dec
	}
	var f feedRangeJSON
	if err := json.Unmarshal(raw, &f); err != nil {
		return Interval{}, fmt.Errorf("--feed-range %s is not a feed range (%v): want %s", clip(t), err, feedRangeForms)
	}
	if f.Range == nil {
		if f.PK != nil || f.PKID != nil {
			return Interval{}, fmt.Errorf("--feed-range %s is a partition key or partition key range id feed range: cosmosctl takes EPK ranges, %s", clip(t), feedRangeForms)
		}
		return Interval{}, fmt.Errorf("--feed-range %s has no \"Range\": want %s", clip(t), feedRangeForms)
	}
	r := f.Range
	if r.Min == nil || r.Max == nil {
		return Interval{}, fmt.Errorf("--feed-range %s: its Range needs both \"min\" and \"max\"", clip(t))
	}
	if r.IsMinInclusive != nil && !*r.IsMinInclusive || r.IsMaxInclusive != nil && *r.IsMaxInclusive {
		return Interval{}, fmt.Errorf("--feed-range %s is not a [min, max) range: cosmosctl reads only the default isMinInclusive true, isMaxInclusive false (the form GetFeedRanges returns)", clip(t))
	}
	iv := Interval{Min: strings.ToUpper(*r.Min), Max: strings.ToUpper(*r.Max)}
	if err := checkHex(iv.Min); err != nil {
		return Interval{}, fmt.Errorf("--feed-range min: %w", err)
	}
	if err := checkHex(iv.Max); err != nil {
		return Interval{}, fmt.Errorf("--feed-range max: %w", err)
	}
	if iv.Max == "" || strings.Compare(iv.Min, iv.Max) >= 0 {
		return Interval{}, fmt.Errorf("--feed-range [%q, %q) is empty: its min must be below its max (\"\" the bottom, \"FF\" the top)", iv.Min, iv.Max)
	}
	return iv, nil
}

// decodeBase64 takes the URL alphabet Java writes, and the standard one a person might
// paste, with or without padding.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "+/") {
		return base64.RawStdEncoding.DecodeString(s)
	}
	return base64.RawURLEncoding.DecodeString(s)
}

func clip(s string) string {
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// DotNetJSON is the .NET SDK's JSON for the feed range (FeedRange.FromJsonString reads
// it): {"Range":{"min":"…","max":"…"}}, the inclusivity flags omitted as .NET omits the
// defaults.
func (iv Interval) DotNetJSON() []byte {
	b, _ := json.Marshal(feedRangeJSON{Range: &rangeJSON{Min: &iv.Min, Max: &iv.Max}})
	return b
}

// javaRange is the JSON Java's FeedRangeEpkImpl writes under "Range" (setProperties puts
// its Range there): Range's constructor sets min, max and isMinInclusive, and
// setMaxInclusive(false) removes isMaxInclusive, so [min, max) is
// {"Range":{"min":"…","max":"…","isMinInclusive":true}} (Azure/azure-sdk-for-java
// sdk/cosmos/azure-cosmos/src/main/java/com/azure/cosmos/implementation/routing/Range.java
// at 14fd5c4b5abbe4ba0a6a49f0f84f009473d5604c; feedranges/FeedRangeEpkImpl.java at
// 09eab8ea917fb2c1b30507f45e917daf99ef4b92).
type javaRange struct {
	Min            string `json:"min"`
	Max            string `json:"max"`
	IsMinInclusive bool   `json:"isMinInclusive"`
}

// JavaBase64 is the Java SDK's string for the feed range: FeedRangeInternal.toString is
// Base64.getUrlEncoder() (padded) of its JSON, and FeedRange.fromString /
// FeedRangeInternal.fromBase64EncodedJsonString decode it with Base64.getUrlDecoder()
// (feedranges/FeedRangeInternal.java at 0185a11f4cb83ba9b0e86cbbb48d3781cd5c53a2).
func (iv Interval) JavaBase64() string {
	b, _ := json.Marshal(struct {
		Range javaRange `json:"Range"`
	}{javaRange{Min: iv.Min, Max: iv.Max, IsMinInclusive: true}})
	return base64.URLEncoding.EncodeToString(b)
}
