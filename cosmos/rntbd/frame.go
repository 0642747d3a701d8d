package rntbd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"
)

// ErrIncomplete marks a decode error that more bytes could cure: the buffer ends before
// the frame its length prefix announces. A stream reader waits for more on it; on any
// other error the bytes are not RNTBD and the connection is lost.
var ErrIncomplete = errors.New("rntbd: incomplete frame")

// headerLen is the fixed part of every frame: u32 length, then u16 resource type + u16
// operation type (request) or u32 status (response), then the 16-byte activity id
// (Java RntbdRequestFrame.LENGTH and RntbdResponseStatus.LENGTH, both 24).
const headerLen = 24

// maxFrame bounds what Encode writes so the u32 length field cannot wrap.
const maxFrame = math.MaxUint32

// Request is an RNTBD request: the frame (resource type, operation type, activity id,
// tokens) and, when its PayloadPresent token is non-zero, the body.
type Request struct {
	ResourceType  uint16
	OperationType uint16
	ActivityID    uuid.UUID
	Tokens        []Token
	Payload       []byte
}

// Response is an RNTBD response: the status frame, the tokens and, when its
// PayloadPresent token is non-zero, the body.
type Response struct {
	Status     uint32
	ActivityID uuid.UUID
	Tokens     []Token
	Payload    []byte
}

// Token returns the first token with the id.
func (r *Request) Token(id uint16) (Token, bool) { return Find(r.Tokens, id) }

// Token returns the first token with the id.
func (r *Response) Token(id uint16) (Token, bool) { return Find(r.Tokens, id) }

// AppendEncode appends the request's wire bytes to dst.
func (r *Request) AppendEncode(dst []byte) ([]byte, error) {
	var head [4]byte
	binary.LittleEndian.PutUint16(head[0:], r.ResourceType)
	binary.LittleEndian.PutUint16(head[2:], r.OperationType)
	return appendFrame(dst, "request", head, r.ActivityID, r.Tokens, ReqPayloadPresent, r.Payload)
}

// Encode returns the request's wire bytes.
func (r *Request) Encode() ([]byte, error) { return r.AppendEncode(nil) }

// AppendEncode appends the response's wire bytes to dst.
func (r *Response) AppendEncode(dst []byte) ([]byte, error) {
	var head [4]byte
	binary.LittleEndian.PutUint32(head[:], r.Status)
	return appendFrame(dst, "response", head, r.ActivityID, r.Tokens, RespPayloadPresent, r.Payload)
}

// Encode returns the response's wire bytes.
func (r *Response) Encode() ([]byte, error) { return r.AppendEncode(nil) }

// payloadPresent applies the payload-present rule: the body follows the frame, behind a
// u32 length, exactly when the PayloadPresent token is non-zero. The token is required,
// so its absence is an error rather than "no body".
func payloadPresent(what string, tokens []Token, id uint16) (bool, error) {
	t, ok := Find(tokens, id)
	if !ok {
		return false, fmt.Errorf("rntbd: %s has no PayloadPresent token (0x%04X)", what, id)
	}
	v, ok := t.Uint()
	if !ok || t.Type != TypeByte {
		return false, fmt.Errorf("rntbd: %s PayloadPresent token (0x%04X) has type %s, want Byte", what, id, t.Type)
	}
	return v != 0, nil
}

func appendFrame(dst []byte, what string, head [4]byte, activity uuid.UUID, tokens []Token, presentID uint16, payload []byte) ([]byte, error) {
	present, err := payloadPresent(what, tokens, presentID)
	if err != nil {
		return dst, err
	}
	if !present && len(payload) > 0 {
		return dst, fmt.Errorf("rntbd: %s has a %d-byte payload but its PayloadPresent token is 0", what, len(payload))
	}
	return appendFrameWithBody(dst, what, head, activity, tokens, present, payload)
}

// appendFrameWithBody writes the frame and, if withBody, the u32 length and body. The
// frame's length field counts the 24-byte header and the tokens, never the body.
func appendFrameWithBody(dst []byte, what string, head [4]byte, activity uuid.UUID, tokens []Token, withBody bool, payload []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = append(dst, head[:]...)
	w := GUIDToWire(activity)
	dst = append(dst, w[:]...)
	dst, n, err := appendTokens(dst, tokens)
	if err != nil {
		return dst[:start], fmt.Errorf("%w (in the %s)", err, what)
	}
	if uint64(headerLen)+uint64(n) > maxFrame {
		return dst[:start], fmt.Errorf("rntbd: %s tokens take %d bytes, more than a u32 frame length allows", what, n)
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(headerLen+n))
	if withBody {
		if uint64(len(payload)) > math.MaxUint32 {
			return dst[:start], fmt.Errorf("rntbd: %s payload of %d bytes does not fit its u32 length", what, len(payload))
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
		dst = append(dst, payload...)
	}
	return dst, nil
}

// frameHead is the decoded fixed part of a frame.
type frameHead struct {
	length   int     // the frame length field: header + tokens
	head     [4]byte // resource + operation type, or status
	activity uuid.UUID
}

// readHead reads and checks the 24-byte header and the length field against b.
func readHead(b []byte, what string) (frameHead, error) {
	if len(b) < 4 {
		return frameHead{}, fmt.Errorf("%w: %s needs 4 bytes for its length, have %d", ErrIncomplete, what, len(b))
	}
	l := binary.LittleEndian.Uint32(b)
	if l < headerLen {
		return frameHead{}, fmt.Errorf("rntbd: %s length %d is shorter than the %d-byte header", what, l, headerLen)
	}
	if uint64(l) > uint64(len(b)) {
		return frameHead{}, fmt.Errorf("%w: %s length is %d, only %d bytes", ErrIncomplete, what, l, len(b))
	}
	var h frameHead
	h.length = int(l)
	copy(h.head[:], b[4:8])
	h.activity = GUIDFromWire([16]byte(b[8:24]))
	return h, nil
}

// readBody reads the u32 length and the body that start at b[off:].
func readBody(b []byte, off int, what string) ([]byte, int, error) {
	rest := b[off:]
	if len(rest) < 4 {
		return nil, 0, fmt.Errorf("%w: %s payload length needs 4 bytes after the %d-byte frame, have %d", ErrIncomplete, what, off, len(rest))
	}
	n := binary.LittleEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(n) > uint64(len(rest)) {
		return nil, 0, fmt.Errorf("%w: %s payload length is %d, only %d bytes follow", ErrIncomplete, what, n, len(rest))
	}
	return rest[:n:n], off + 4 + int(n), nil
}

// decodeFrame reads a request or response: header, tokens, and the body if the
// payload-present rule says so. It returns the bytes consumed; anything after them is the
// next frame's.
func decodeFrame(b []byte, what string, tab Table, presentID uint16) (frameHead, []Token, []byte, int, error) {
	h, err := readHead(b, what)
	if err != nil {
		return h, nil, nil, 0, err
	}
	tokens, err := readTokens(b[headerLen:h.length], tab)
	if err != nil {
		return h, nil, nil, 0, fmt.Errorf("%w (in the %s)", err, what)
	}
	present, err := payloadPresent(what, tokens, presentID)
	if err != nil {
		return h, nil, nil, 0, err
	}
	if !present {
		return h, tokens, nil, h.length, nil
	}
	body, n, err := readBody(b, h.length, what)
	if err != nil {
		return h, nil, nil, 0, err
	}
	return h, tokens, body, n, nil
}

// DecodeRequest reads one request from the front of b and returns it with the number of
// bytes it took. It never reads past b nor past the frame's own length. Tokens and
// Payload alias b.
func DecodeRequest(b []byte) (Request, int, error) {
	h, tokens, body, n, err := decodeFrame(b, "request", RequestTokens, ReqPayloadPresent)
	if err != nil {
		return Request{}, 0, err
	}
	return Request{
		ResourceType:  binary.LittleEndian.Uint16(h.head[0:]),
		OperationType: binary.LittleEndian.Uint16(h.head[2:]),
		ActivityID:    h.activity,
		Tokens:        tokens,
		Payload:       body,
	}, n, nil
}

// DecodeResponse reads one response from the front of b and returns it with the number
// of bytes it took. It never reads past b nor past the frame's own length. Tokens and
// Payload alias b.
func DecodeResponse(b []byte) (Response, int, error) {
	h, tokens, body, n, err := decodeFrame(b, "response", ResponseTokens, RespPayloadPresent)
	if err != nil {
		return Response{}, 0, err
	}
	return Response{
		Status:     binary.LittleEndian.Uint32(h.head[:]),
		ActivityID: h.activity,
		Tokens:     tokens,
		Payload:    body,
	}, n, nil
}
