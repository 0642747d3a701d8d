package cosmos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// ServiceMessage is the message of a Cosmos DB error body taken apart. Real accounts
// wrap the part meant for a person ("Message: {"Errors":["…"]}") and append lines of
// diagnostics ("\r\nActivityId: …, Request URI: …, RequestStats: …"); on a 401 the part
// that tells what went wrong is the payload the service signed, whose fields are
// separated by line feeds. Cutting the message at its first line loses both.
type ServiceMessage struct {
	// Text is the part for a person, on one line: the Errors unwrapped (joined by "; "),
	// the payload to sign kept with its line feeds shown as \n.
	Text string
	// ActivityID is the activity id the diagnostics name, if any.
	ActivityID string
}

// payloadToSign introduces, in a 401's message, the string the service signed: the
// verb, resource type, resource link and date the client should have signed too (no
// key and no signature: it is safe to show).
const payloadToSign = "payload to sign: '"

// diagnosticPrefixes start the lines the gateway appends to a message for support
// engineers; once one starts, the rest of the message is diagnostics.
var diagnosticPrefixes = []string{
	"ActivityId:", "Request URI:", "RequestStats:", "RequestStartTime:", "RequestEndTime:",
	"ResponseTime:", "StorePhysicalAddress:", "SDK:", ", SDK:", "Microsoft.Azure.Documents", "{",
}

var activityIDInMessage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`ActivityId: ?([0-9A-Fa-f]{8}-[0-9A-Fa-f-]{27,})`)
})

// ParseServiceMessage takes a service's error message apart (see ServiceMessage).
// Messages that follow none of the service's conventions (the cosmosctl emulator's, a
// proxy's) come back as they are, on one line.
func ParseServiceMessage(raw string) ServiceMessage {
	var m ServiceMessage
	if id := activityIDInMessage().FindStringSubmatch(raw); id != nil {
		m.ActivityID = id[1]
	}
	s := showPayloadToSign(strings.TrimSpace(raw))
	var human []string
	// The errors object may follow a few words of the gateway's own ("Gateway Failed
	// to Retrieve Query Plan: Message: {"errors":[…]}"), which are kept in front.
	prefix := ""
	if i := strings.Index(firstLine(s), "Message: {"); i >= 0 {
		prefix, s = strings.TrimSpace(s[:i]), s[i+len("Message: "):]
	} else if rest, ok := strings.CutPrefix(s, "Message: "); ok {
		s = rest
	}
	if errs, rest, ok := unwrapErrors(s); ok {
		if prefix != "" {
			errs[0] = prefix + " " + errs[0]
		}
		human = append(human, errs...)
		s = rest
	} else if prefix != "" {
		s = prefix + " " + s
	}
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		// The first line is the message itself whatever it looks like, unless it is
		// already the diagnostics.
		if (len(human) > 0 && isDiagnostic(line)) || strings.HasPrefix(line, "ActivityId:") {
			break
		}
		if line = strings.TrimSpace(strings.TrimRight(line, ",")); line != "" {
			human = append(human, line)
		}
	}
	m.Text = strings.Join(human, "; ")
	return m
}

// unwrapErrors reads the errors object at the start of s and returns its messages and
// what follows it. Most errors are {"Errors":["…", …]}; a query the service cannot
// parse is {"errors":[{"severity":"Error","location":{"start":14,"end":18},
// "code":"SC1001","message":"Syntax error, incorrect syntax near 'FORM'."}]}, shown as
// "SC1001: Syntax error, incorrect syntax near 'FORM'. (at characters 14–18 of the query)".
func unwrapErrors(s string) (errs []string, rest string, ok bool) {
	if !strings.HasPrefix(s, "{") {
		return nil, s, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	var v struct {
		Errors []json.RawMessage `json:"Errors"`
	}
	if dec.Decode(&v) != nil || len(v.Errors) == 0 {
		return nil, s, false
	}
	for _, raw := range v.Errors {
		var text string
		var qe struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			Location *struct {
				Start int `json:"start"`
				End   int `json:"end"`
			} `json:"location"`
		}
		switch {
		case json.Unmarshal(raw, &text) == nil:
		case json.Unmarshal(raw, &qe) == nil && qe.Message != "":
			text = qe.Message
			if qe.Code != "" {
				text = qe.Code + ": " + text
			}
			switch l := qe.Location; {
			case l == nil:
			case l.Start == l.End:
				text += fmt.Sprintf(" (at character %d of the query)", l.Start)
			default:
				text += fmt.Sprintf(" (at characters %d–%d of the query)", l.Start, l.End)
			}
		default:
			text = string(raw)
		}
		if text = strings.TrimSpace(text); text != "" {
			errs = append(errs, strings.Join(strings.Fields(text), " "))
		}
	}
	if len(errs) == 0 {
		return nil, s, false
	}
	return errs, s[dec.InputOffset():], true
}

// showPayloadToSign rewrites the line feeds inside a 401's payload to sign as the two
// characters \n, so that the payload stays on the message's line and shows where each
// field ends (an empty date field is "\n\n" at the end).
func showPayloadToSign(s string) string {
	i := strings.Index(s, payloadToSign)
	if i < 0 {
		return s
	}
	start := i + len(payloadToSign)
	end := payloadEnd(s[start:])
	if end < 0 {
		return s
	}
	payload := strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s[start : start+end])
	return s[:start] + payload + s[start+end:]
}

// payloadEnd is the index of the quote that closes the payload p begins: the one after
// the fifth line feed (the string to sign has five fields, each ending in one), or,
// for a payload of another shape, the first quote that ends a word.
func payloadEnd(p string) int {
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] != '\n' {
			continue
		}
		if n++; n == 5 {
			if i+1 < len(p) && p[i+1] == '\'' {
				return i + 1
			}
			break
		}
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '\'' && (i+1 == len(p) || bytes.IndexByte([]byte(" \r\n,.;"), p[i+1]) >= 0) {
			return i
		}
	}
	return -1
}

func isDiagnostic(line string) bool {
	for _, p := range diagnosticPrefixes {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// firstLine is s up to its first line break, trimmed.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}
