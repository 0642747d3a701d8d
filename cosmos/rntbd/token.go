package rntbd

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/google/uuid"
)

// TokenType is the one-byte type that follows a token's id on the wire. It alone decides
// how many bytes the value takes, which is why a decoder can step over a token whose id it
// has never heard of.
type TokenType byte

// The token types, as Java's RntbdTokenType, .NET's RntbdTokenTypes and the Rust driver's
// tokens.rs number them.
const (
	TypeByte        TokenType = 0x00 // 1 byte; booleans are 0 or 1
	TypeUShort      TokenType = 0x01 // u16
	TypeULong       TokenType = 0x02 // u32
	TypeLong        TokenType = 0x03 // i32
	TypeULongLong   TokenType = 0x04 // u64
	TypeLongLong    TokenType = 0x05 // i64
	TypeGUID        TokenType = 0x06 // 16 bytes, Microsoft GUID byte order
	TypeSmallString TokenType = 0x07 // u8 length + UTF-8
	TypeString      TokenType = 0x08 // u16 length + UTF-8
	TypeULongString TokenType = 0x09 // u32 length + UTF-8
	TypeSmallBytes  TokenType = 0x0A // u8 length + bytes
	TypeBytes       TokenType = 0x0B // u16 length + bytes
	TypeULongBytes  TokenType = 0x0C // u32 length + bytes
	TypeFloat       TokenType = 0x0D // IEEE 754 binary32
	TypeDouble      TokenType = 0x0E // IEEE 754 binary64
	TypeInvalid     TokenType = 0xFF // no value
)

var typeNames = map[TokenType]string{
	TypeByte: "Byte", TypeUShort: "UShort", TypeULong: "ULong", TypeLong: "Long",
	TypeULongLong: "ULongLong", TypeLongLong: "LongLong", TypeGUID: "Guid",
	TypeSmallString: "SmallString", TypeString: "String", TypeULongString: "ULongString",
	TypeSmallBytes: "SmallBytes", TypeBytes: "Bytes", TypeULongBytes: "ULongBytes",
	TypeFloat: "Float", TypeDouble: "Double", TypeInvalid: "Invalid",
}

func (t TokenType) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("TokenType(0x%02X)", byte(t))
}

// fixedSize is the value size of a fixed-width type; ok is false for length-prefixed
// types and for type bytes no SDK defines.
func (t TokenType) fixedSize() (n int, ok bool) {
	switch t {
	case TypeByte:
		return 1, true
	case TypeUShort:
		return 2, true
	case TypeULong, TypeLong, TypeFloat:
		return 4, true
	case TypeULongLong, TypeLongLong, TypeDouble:
		return 8, true
	case TypeGUID:
		return 16, true
	case TypeInvalid:
		return 0, true
	}
	return 0, false
}

// prefixSize is the width of the length prefix of a length-prefixed type, 0 otherwise.
func (t TokenType) prefixSize() int {
	switch t {
	case TypeSmallString, TypeSmallBytes:
		return 1
	case TypeString, TypeBytes:
		return 2
	case TypeULongString, TypeULongBytes:
		return 4
	}
	return 0
}

func (t TokenType) isString() bool {
	return t == TypeSmallString || t == TypeString || t == TypeULongString
}

func (t TokenType) known() bool {
	_, fixed := t.fixedSize()
	return fixed || t.prefixSize() > 0
}

// Token is one header of a frame: an id, the wire type and the value's bytes as they were
// (or will be) on the wire, without the length prefix. Keeping the bytes rather than a
// decoded value lets a frame carry tokens this package does not know and re-encode every
// frame byte for byte. A decoded Token's Value aliases the buffer it was decoded from.
type Token struct {
	ID    uint16
	Type  TokenType
	Value []byte
}

// tokenHeaderLen is u16 id + u8 type (Java RntbdToken.HEADER_LENGTH).
const tokenHeaderLen = 3

// Constructors, one per value kind. Length-prefixed values too long for their prefix are
// not rejected here but by the encoder, which can say which frame they were in.

func ByteToken(id uint16, v byte) Token { return Token{id, TypeByte, []byte{v}} }

func BoolToken(id uint16, v bool) Token {
	if v {
		return ByteToken(id, 1)
	}
	return ByteToken(id, 0)
}

func UShortToken(id uint16, v uint16) Token {
	return Token{id, TypeUShort, binary.LittleEndian.AppendUint16(nil, v)}
}

func ULongToken(id uint16, v uint32) Token {
	return Token{id, TypeULong, binary.LittleEndian.AppendUint32(nil, v)}
}

func LongToken(id uint16, v int32) Token {
	return Token{id, TypeLong, binary.LittleEndian.AppendUint32(nil, uint32(v))}
}

func ULongLongToken(id uint16, v uint64) Token {
	return Token{id, TypeULongLong, binary.LittleEndian.AppendUint64(nil, v)}
}

func LongLongToken(id uint16, v int64) Token {
	return Token{id, TypeLongLong, binary.LittleEndian.AppendUint64(nil, uint64(v))}
}

func FloatToken(id uint16, v float32) Token {
	return Token{id, TypeFloat, binary.LittleEndian.AppendUint32(nil, math.Float32bits(v))}
}

func DoubleToken(id uint16, v float64) Token {
	return Token{id, TypeDouble, binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))}
}

func GUIDToken(id uint16, v uuid.UUID) Token {
	w := GUIDToWire(v)
	return Token{id, TypeGUID, w[:]}
}

// StringToken makes a token of one of the three string types.
func StringToken(id uint16, t TokenType, s string) Token { return Token{id, t, []byte(s)} }

// BytesToken makes a token of one of the three bytes types.
func BytesToken(id uint16, t TokenType, b []byte) Token { return Token{id, t, b} }

// Uint is the value of a Byte, UShort, ULong or ULongLong token.
func (t Token) Uint() (uint64, bool) {
	if n, ok := t.Type.fixedSize(); !ok || n != len(t.Value) {
		return 0, false
	}
	switch t.Type {
	case TypeByte:
		return uint64(t.Value[0]), true
	case TypeUShort:
		return uint64(binary.LittleEndian.Uint16(t.Value)), true
	case TypeULong:
		return uint64(binary.LittleEndian.Uint32(t.Value)), true
	case TypeULongLong:
		return binary.LittleEndian.Uint64(t.Value), true
	}
	return 0, false
}

// Int is the value of a Long or LongLong token.
func (t Token) Int() (int64, bool) {
	if n, ok := t.Type.fixedSize(); !ok || n != len(t.Value) {
		return 0, false
	}
	switch t.Type {
	case TypeLong:
		return int64(int32(binary.LittleEndian.Uint32(t.Value))), true
	case TypeLongLong:
		return int64(binary.LittleEndian.Uint64(t.Value)), true
	}
	return 0, false
}

// Float is the value of a Float or Double token.
func (t Token) Float() (float64, bool) {
	if n, ok := t.Type.fixedSize(); !ok || n != len(t.Value) {
		return 0, false
	}
	switch t.Type {
	case TypeFloat:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(t.Value))), true
	case TypeDouble:
		return math.Float64frombits(binary.LittleEndian.Uint64(t.Value)), true
	}
	return 0, false
}

// Str is the value of a SmallString, String or ULongString token.
func (t Token) Str() (string, bool) {
	if !t.Type.isString() {
		return "", false
	}
	return string(t.Value), true
}

// GUID is the value of a Guid token.
func (t Token) GUID() (uuid.UUID, bool) {
	if t.Type != TypeGUID || len(t.Value) != 16 {
		return uuid.UUID{}, false
	}
	return GUIDFromWire([16]byte(t.Value)), true
}

// encodedLen is the token's size on the wire, or an error if its value does not fit its type.
func (t Token) encodedLen() (int, error) {
	if n, ok := t.Type.fixedSize(); ok {
		if len(t.Value) != n {
			return 0, fmt.Errorf("rntbd: token 0x%04X of type %s holds %d bytes, want %d", t.ID, t.Type, len(t.Value), n)
		}
		return tokenHeaderLen + n, nil
	}
	p := t.Type.prefixSize()
	if p == 0 {
		return 0, fmt.Errorf("rntbd: token 0x%04X has unknown type 0x%02X", t.ID, byte(t.Type))
	}
	if max := uint64(1)<<(8*p) - 1; uint64(len(t.Value)) > max {
		return 0, fmt.Errorf("rntbd: token 0x%04X of type %s holds %d bytes, more than its %d-byte length prefix allows (%d)", t.ID, t.Type, len(t.Value), p, max)
	}
	return tokenHeaderLen + p + len(t.Value), nil
}

// appendToken writes t; the caller has checked it with encodedLen.
func appendToken(dst []byte, t Token) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, t.ID)
	dst = append(dst, byte(t.Type))
	switch t.Type.prefixSize() {
	case 1:
		dst = append(dst, byte(len(t.Value)))
	case 2:
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(t.Value)))
	case 4:
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(t.Value)))
	}
	return append(dst, t.Value...)
}

// readToken reads one token from the front of b, which holds the rest of the token stream,
// and returns it with the bytes it took. It reads nothing past b.
func readToken(b []byte, tab Table) (Token, int, error) {
	if len(b) < tokenHeaderLen {
		return Token{}, 0, fmt.Errorf("rntbd: token header needs %d bytes, %d left in the frame", tokenHeaderLen, len(b))
	}
	t := Token{ID: binary.LittleEndian.Uint16(b), Type: TokenType(b[2])}
	rest := b[tokenHeaderLen:]
	if n, ok := t.Type.fixedSize(); ok {
		if len(rest) < n {
			return Token{}, 0, fmt.Errorf("rntbd: token 0x%04X%s of type %s needs %d bytes, %d left in the frame", t.ID, tab.label(t.ID), t.Type, n, len(rest))
		}
		t.Value = rest[:n:n]
		return t, tokenHeaderLen + n, nil
	}
	p := t.Type.prefixSize()
	if p == 0 {
		// Without the type the value's size is unknown, so nothing after it can be read.
		// Java's RntbdTokenType.fromId maps such a byte to Invalid and reads no value,
		// which would misread every byte after it; stopping says what happened instead.
		return Token{}, 0, fmt.Errorf("rntbd: token 0x%04X%s has unknown type 0x%02X; the rest of the frame cannot be read", t.ID, tab.label(t.ID), byte(t.Type))
	}
	if len(rest) < p {
		return Token{}, 0, fmt.Errorf("rntbd: token 0x%04X%s of type %s needs a %d-byte length, %d left in the frame", t.ID, tab.label(t.ID), t.Type, p, len(rest))
	}
	var n uint64
	switch p {
	case 1:
		n = uint64(rest[0])
	case 2:
		n = uint64(binary.LittleEndian.Uint16(rest))
	case 4:
		n = uint64(binary.LittleEndian.Uint32(rest))
	}
	rest = rest[p:]
	if n > uint64(len(rest)) {
		return Token{}, 0, fmt.Errorf("rntbd: token 0x%04X%s claims %d bytes, %d left in the frame", t.ID, tab.label(t.ID), n, len(rest))
	}
	t.Value = rest[:n:n]
	return t, tokenHeaderLen + p + int(n), nil
}

// readTokens reads a whole token stream: the stream has no count and ends where the
// frame's length says. Every token is kept, known or not, in wire order; tab then checks
// the ones it knows.
func readTokens(b []byte, tab Table) ([]Token, error) {
	var tokens []Token
	for len(b) > 0 {
		t, n, err := readToken(b, tab)
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, t)
		b = b[n:]
	}
	return tokens, tab.check(tokens)
}

// appendTokens writes tokens and returns the stream's length.
func appendTokens(dst []byte, tokens []Token) ([]byte, int, error) {
	total := 0
	for _, t := range tokens {
		n, err := t.encodedLen()
		if err != nil {
			return dst, 0, err
		}
		total += n
	}
	dst = growTo(dst, total)
	for _, t := range tokens {
		dst = appendToken(dst, t)
	}
	return dst, total, nil
}

func growTo(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		grown := make([]byte, len(dst), len(dst)+n)
		copy(grown, dst)
		return grown
	}
	return dst
}

// Find returns the first token with the id.
func Find(tokens []Token, id uint16) (Token, bool) {
	for _, t := range tokens {
		if t.ID == id {
			return t, true
		}
	}
	return Token{}, false
}
