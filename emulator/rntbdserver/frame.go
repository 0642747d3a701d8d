package rntbdserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame layouts (REFERENCE-rntbd.md §1.2, §1.3; Java RntbdRequestFrame.java LENGTH =
// 4+2+2+16, RntbdResponseStatus.java LENGTH = 4+4+16, RntbdRequest.encode,
// RntbdResponse.decode; azure-sdk-for-java commit 01feecf6). All integers little-endian.
//
//	request:  u32 length · u16 resource type · u16 operation type · 16-byte activity id · tokens
//	response: u32 length · u32 status · 16-byte activity id · tokens
//
// length counts the 24-byte head and the tokens, not the body. When the PayloadPresent
// token is 1, u32 body length + body follow the tokens.
const headLength = 24

// Request token ids the server reads (Java RntbdConstants.RntbdRequestHeader, commit
// 01feecf6; .NET msdata/direct RntbdConstants.cs RequestIdentifiers agree).
const (
	reqResourceID               uint16 = 0x0000
	reqAuthorizationToken       uint16 = 0x0001
	reqPayloadPresent           uint16 = 0x0002
	reqDate                     uint16 = 0x0003
	reqPageSize                 uint16 = 0x0004
	reqSessionToken             uint16 = 0x0005
	reqContinuationToken        uint16 = 0x0006
	reqIndexingDirective        uint16 = 0x0007
	reqMatch                    uint16 = 0x0008
	reqConsistencyLevel         uint16 = 0x0010
	reqReplicaPath              uint16 = 0x0013
	reqDatabaseName             uint16 = 0x0015
	reqCollectionName           uint16 = 0x0016
	reqDocumentName             uint16 = 0x0017
	reqClientVersion            uint16 = 0x0028
	reqPartitionKey             uint16 = 0x002B
	reqPartitionKeyRangeID      uint16 = 0x002C
	reqCollectionRid            uint16 = 0x0035
	reqPopulateQuotaInfo        uint16 = 0x0040
	reqPopulateQueryMetrics     uint16 = 0x0042
	reqTransportRequestID       uint16 = 0x004D
	reqEffectivePartitionKey    uint16 = 0x005A
	reqAllowTentativeWrites     uint16 = 0x0066
	reqReturnPreference         uint16 = 0x0082
	reqSDKSupportedCapabilities uint16 = 0x00A2
	reqPopulateIndexMetrics     uint16 = 0x00A9
	reqCorrelatedActivityID     uint16 = 0x00B0
	reqGlobalDatabaseAccount    uint16 = 0x00CE
)

// Response token ids the server writes (Java RntbdConstants.RntbdResponseHeader, commit
// 01feecf6; 0x0063 from .NET msdata/direct RntbdConstants.cs ResponseIdentifiers
// PhysicalPartitionId, and seen with type String in the .NET vector, REFERENCE §1.3).
const (
	respPayloadPresent         uint16 = 0x0000
	respContinuationToken      uint16 = 0x0003
	respETag                   uint16 = 0x0004
	respRetryAfterMilliseconds uint16 = 0x000C
	respStorageMaxQuota        uint16 = 0x000E
	respStorageQuotaUsage      uint16 = 0x000F
	respLSN                    uint16 = 0x0013
	respItemCount              uint16 = 0x0014
	respRequestCharge          uint16 = 0x0015
	respQuorumAckedLSN         uint16 = 0x001A
	respSubStatus              uint16 = 0x001C
	respCurrentWriteQuorum     uint16 = 0x001E
	respCurrentReplicaSetSize  uint16 = 0x001F
	respPartitionKeyRangeID    uint16 = 0x0021
	respXPRole                 uint16 = 0x0026
	respQueryMetrics           uint16 = 0x0028
	respGlobalCommittedLSN     uint16 = 0x0029
	respNumberOfReadRegions    uint16 = 0x0030
	respItemLSN                uint16 = 0x0032
	respTransportRequestID     uint16 = 0x0035
	respLocalLSN               uint16 = 0x003A
	respQuorumAckedLocalLSN    uint16 = 0x003B
	respItemLocalLSN           uint16 = 0x003C
	respSessionToken           uint16 = 0x003E
	respIndexUtilization       uint16 = 0x0044
	respBackendRequestDuration uint16 = 0x0051
	respPhysicalPartitionID    uint16 = 0x0063
	respQueryAdvice            uint16 = 0x0075
)

// Resource and operation types (Java RntbdConstants RntbdResourceType,
// RntbdOperationType, commit 01feecf6).
const (
	ResourceConnection uint16 = 0x0000
	ResourceDocument   uint16 = 0x0003

	OpConnection uint16 = 0x0000
	OpCreate     uint16 = 0x0001
	OpPatch      uint16 = 0x0002
	OpRead       uint16 = 0x0003
	OpReadFeed   uint16 = 0x0004
	OpDelete     uint16 = 0x0005
	OpReplace    uint16 = 0x0006
	OpUpsert     uint16 = 0x0013
)

// Limits: a frame's head and tokens, and a body (a 2 MB document with room to spare).
const (
	MaxFrameLength = 1 << 20
	MaxBodyLength  = 4 << 20
)

// Request is one decoded request frame.
type Request struct {
	ResourceType  uint16
	OperationType uint16
	ActivityID    [16]byte
	Tokens        []Token
	// PayloadPresent is the PayloadPresent token (0x0002); Body follows when it is set.
	PayloadPresent bool
	Body           []byte
}

// Token returns the first token with id.
func (r *Request) Token(id uint16) (Token, bool) {
	for _, t := range r.Tokens {
		if t.ID == id {
			return t, true
		}
	}
	return Token{}, false
}

// ErrShort reports that b ends before the frame does.
var ErrShort = errors.New("rntbd: frame incomplete")

// parseHead reads the head and token stream of the frame at the start of b.
func parseHead(b []byte) (r Request, n int, err error) {
	if len(b) < 4 {
		return r, 0, ErrShort
	}
	length := binary.LittleEndian.Uint32(b)
	if length < headLength || length > MaxFrameLength {
		return r, 0, fmt.Errorf("rntbd: frame length %d out of range [%d, %d]", length, headLength, MaxFrameLength)
	}
	if uint64(len(b)) < uint64(length) {
		return r, 0, ErrShort
	}
	r.ResourceType = binary.LittleEndian.Uint16(b[4:])
	r.OperationType = binary.LittleEndian.Uint16(b[6:])
	copy(r.ActivityID[:], b[8:24])
	if r.Tokens, err = decodeTokens(b[headLength:length]); err != nil {
		return r, 0, err
	}
	return r, int(length), nil
}

// payloadLength applies the payload-present rule: PayloadPresent (0x0002, Byte) is
// required on a request (Java marks it isRequired); when it is not 0 the body follows.
func (r *Request) payloadRule() error {
	t, ok := r.Token(reqPayloadPresent)
	if !ok {
		return errors.New("rntbd: request without the required PayloadPresent token (0x0002)")
	}
	v, isUint := t.Uint()
	if !isUint {
		return fmt.Errorf("rntbd: PayloadPresent token has type 0x%02X, not Byte", t.Type)
	}
	r.PayloadPresent = v != 0
	return nil
}

// ParseRequest decodes the request frame at the start of b — head, tokens and, when
// PayloadPresent is set, the u32-length body — and returns how many bytes it used. It
// never reads past b (ErrShort when b ends first). Context requests (resource and
// operation 0) carry no PayloadPresent and no body.
func ParseRequest(b []byte) (*Request, int, error) {
	r, n, err := parseHead(b)
	if err != nil {
		return nil, 0, err
	}
	if r.ResourceType == ResourceConnection && r.OperationType == OpConnection {
		return &r, n, nil
	}
	if err := r.payloadRule(); err != nil {
		return nil, 0, err
	}
	if !r.PayloadPresent {
		return &r, n, nil
	}
	if len(b)-n < 4 {
		return nil, 0, ErrShort
	}
	l := binary.LittleEndian.Uint32(b[n:])
	if l > MaxBodyLength {
		return nil, 0, fmt.Errorf("rntbd: body length %d over %d", l, MaxBodyLength)
	}
	n += 4
	if uint64(len(b)-n) < uint64(l) {
		return nil, 0, ErrShort
	}
	r.Body = b[n : n+int(l) : n+int(l)]
	return &r, n + int(l), nil
}

// readRequest reads one request frame from a connection.
func readRequest(rd io.Reader) (*Request, error) {
	var lb [4]byte
	if _, err := io.ReadFull(rd, lb[:]); err != nil {
		return nil, err
	}
	length := binary.LittleEndian.Uint32(lb[:])
	if length < headLength || length > MaxFrameLength {
		return nil, fmt.Errorf("rntbd: frame length %d out of range [%d, %d]", length, headLength, MaxFrameLength)
	}
	buf := make([]byte, length)
	copy(buf, lb[:])
	if _, err := io.ReadFull(rd, buf[4:]); err != nil {
		return nil, err
	}
	r, _, err := parseHead(buf)
	if err != nil {
		return nil, err
	}
	if r.ResourceType == ResourceConnection && r.OperationType == OpConnection {
		return &r, nil
	}
	if err := r.payloadRule(); err != nil {
		return nil, err
	}
	if r.PayloadPresent {
		if _, err := io.ReadFull(rd, lb[:]); err != nil {
			return nil, err
		}
		l := binary.LittleEndian.Uint32(lb[:])
		if l > MaxBodyLength {
			return nil, fmt.Errorf("rntbd: body length %d over %d", l, MaxBodyLength)
		}
		r.Body = make([]byte, l)
		if _, err := io.ReadFull(rd, r.Body); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// Response is a response frame to encode.
type Response struct {
	Status     uint32
	ActivityID [16]byte
	// Tokens after PayloadPresent, which EncodeResponse writes first (as the .NET vector
	// has it) from Body != nil.
	Tokens []Token
	Body   []byte
}

// EncodeResponse encodes a response frame: head, PayloadPresent, tokens, then the
// u32-length body when there is one.
func EncodeResponse(r *Response) []byte {
	present := byte(0)
	if r.Body != nil {
		present = 1
	}
	b := make([]byte, headLength, headLength+64*len(r.Tokens)+len(r.Body)+8)
	binary.LittleEndian.PutUint32(b[4:], r.Status)
	copy(b[8:], r.ActivityID[:])
	b = appendToken(b, byteToken(respPayloadPresent, present))
	for _, t := range r.Tokens {
		b = appendToken(b, t)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	if r.Body != nil {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Body)))
		b = append(b, r.Body...)
	}
	return b
}

// encodeContextResponse encodes the answer to a context request: status, tokens, and for
// an error status a u32-length JSON body right after the tokens — the context response
// has no PayloadPresent token (Java RntbdContext.decode; .NET
// Dispatcher.NegotiateRntbdContextAsync; REFERENCE §1.5).
func encodeContextResponse(status uint32, activity [16]byte, tokens []Token, errBody []byte) []byte {
	b := make([]byte, headLength, 128+len(errBody))
	binary.LittleEndian.PutUint32(b[4:], status)
	copy(b[8:], activity[:])
	for _, t := range tokens {
		b = appendToken(b, t)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	if errBody != nil {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(errBody)))
		b = append(b, errBody...)
	}
	return b
}
