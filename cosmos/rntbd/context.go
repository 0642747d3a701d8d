package rntbd

import (
	"encoding/binary"
	"fmt"

	"github.com/google/uuid"
)

// CurrentProtocolVersion is the ProtocolVersion a client offers (Java
// RntbdConstants.CURRENT_PROTOCOL_VERSION).
const CurrentProtocolVersion uint32 = 0x00000001

// ContextRequest is the first frame on every direct-mode TCP connection: resource and
// operation type both Connection (0x0000), then ProtocolVersion, ClientVersion (the
// x-ms-version string) and UserAgent, all required. It has no PayloadPresent token and no
// body. Gateway 2.0 never sends one: it has no negotiation.
type ContextRequest struct {
	ActivityID uuid.UUID
	Tokens     []Token
}

// NewContextRequest builds the negotiation frame with the three required tokens first and
// extra ones (.NET also sends EnableChannelMultiplexing 0x0004) after them.
func NewContextRequest(activityID uuid.UUID, clientVersion, userAgent string, extra ...Token) ContextRequest {
	tokens := []Token{
		ULongToken(CtxReqProtocolVersion, CurrentProtocolVersion),
		StringToken(CtxReqClientVersion, TypeSmallString, clientVersion),
		StringToken(CtxReqUserAgent, TypeSmallString, userAgent),
	}
	return ContextRequest{ActivityID: activityID, Tokens: append(tokens, extra...)}
}

// AppendEncode appends the context request's wire bytes to dst.
func (c *ContextRequest) AppendEncode(dst []byte) ([]byte, error) {
	if err := ContextRequestTokens.check(c.Tokens); err != nil {
		return dst, fmt.Errorf("%w (in the context request)", err)
	}
	// Resource type and operation type are both Connection, 0x0000.
	return appendFrameWithBody(dst, "context request", [4]byte{}, c.ActivityID, c.Tokens, false, nil)
}

// Encode returns the context request's wire bytes.
func (c *ContextRequest) Encode() ([]byte, error) { return c.AppendEncode(nil) }

// DecodeContextRequest reads a context request from the front of b, as a server (or a
// test double of one) does, and returns the bytes it took.
func DecodeContextRequest(b []byte) (ContextRequest, int, error) {
	const what = "context request"
	h, err := readHead(b, what)
	if err != nil {
		return ContextRequest{}, 0, err
	}
	rt, op := binary.LittleEndian.Uint16(h.head[0:]), binary.LittleEndian.Uint16(h.head[2:])
	if rt != 0 || op != 0 {
		return ContextRequest{}, 0, fmt.Errorf("rntbd: %s has resource type 0x%04X and operation type 0x%04X, want Connection (0x0000) for both", what, rt, op)
	}
	tokens, err := readTokens(b[headerLen:h.length], ContextRequestTokens)
	if err != nil {
		return ContextRequest{}, 0, fmt.Errorf("%w (in the %s)", err, what)
	}
	return ContextRequest{ActivityID: h.activity, Tokens: tokens}, h.length, nil
}

// ContextResponse is the server's answer to a ContextRequest. On success it names the
// server (ServerAgent, ServerVersion) and may set timeouts; on failure (status below 200
// or from 400) a u32-length-prefixed JSON error follows the frame, and the tokens may say
// which client or protocol version the server wants (Java RntbdContext.decode, .NET
// Dispatcher.NegotiateRntbdContextAsync). No PayloadPresent token: the status decides.
type ContextResponse struct {
	Status     uint32
	ActivityID uuid.UUID
	Tokens     []Token
	ErrorBody  []byte
}

// Failed reports whether the negotiation failed and the frame carries an error body.
func (c *ContextResponse) Failed() bool { return contextFailed(c.Status) }

func contextFailed(status uint32) bool { return status < 200 || status >= 400 }

// ServerAgent and ServerVersion are the required strings of a successful negotiation.
func (c *ContextResponse) ServerAgent() string   { return str(c.Tokens, CtxRespServerAgent) }
func (c *ContextResponse) ServerVersion() string { return str(c.Tokens, CtxRespServerVersion) }

// IdleTimeoutSeconds is how long the server keeps an idle connection, 0 if not sent.
func (c *ContextResponse) IdleTimeoutSeconds() uint32 {
	t, _ := Find(c.Tokens, CtxRespIdleTimeoutInSeconds)
	v, _ := t.Uint()
	return uint32(v)
}

func str(tokens []Token, id uint16) string {
	t, _ := Find(tokens, id)
	s, _ := t.Str()
	return s
}

// AppendEncode appends the context response's wire bytes to dst.
func (c *ContextResponse) AppendEncode(dst []byte) ([]byte, error) {
	const what = "context response"
	tab := ContextResponseTokens
	if c.Failed() {
		tab = notRequired(tab)
	} else if len(c.ErrorBody) > 0 {
		return dst, fmt.Errorf("rntbd: %s with status %d carries a %d-byte error body; only a failed negotiation has one", what, c.Status, len(c.ErrorBody))
	}
	if err := tab.check(c.Tokens); err != nil {
		return dst, fmt.Errorf("%w (in the %s)", err, what)
	}
	var head [4]byte
	binary.LittleEndian.PutUint32(head[:], c.Status)
	return appendFrameWithBody(dst, what, head, c.ActivityID, c.Tokens, c.Failed(), c.ErrorBody)
}

// Encode returns the context response's wire bytes.
func (c *ContextResponse) Encode() ([]byte, error) { return c.AppendEncode(nil) }

// DecodeContextResponse reads a context response from the front of b and returns the
// bytes it took. ServerAgent and ServerVersion are required only on success: a failed
// negotiation must still surface its error body.
func DecodeContextResponse(b []byte) (ContextResponse, int, error) {
	const what = "context response"
	h, err := readHead(b, what)
	if err != nil {
		return ContextResponse{}, 0, err
	}
	status := binary.LittleEndian.Uint32(h.head[:])
	tab := ContextResponseTokens
	if contextFailed(status) {
		tab = notRequired(tab)
	}
	tokens, err := readTokens(b[headerLen:h.length], tab)
	if err != nil {
		return ContextResponse{}, 0, fmt.Errorf("%w (in the %s)", err, what)
	}
	c := ContextResponse{Status: status, ActivityID: h.activity, Tokens: tokens}
	if !contextFailed(status) {
		return c, h.length, nil
	}
	body, n, err := readBody(b, h.length, what)
	if err != nil {
		return ContextResponse{}, 0, err
	}
	c.ErrorBody = body
	return c, n, nil
}

// notRequired is tab with every token optional: types still checked, presence not.
func notRequired(tab Table) Table {
	out := make(Table, len(tab))
	for id, d := range tab {
		d.Required = false
		out[id] = d
	}
	return out
}
