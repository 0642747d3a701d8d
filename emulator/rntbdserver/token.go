package rntbdserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Token types. Ids and value layouts follow Java RntbdTokenType.java and the table in
// REFERENCE-rntbd.md §1.4 (azure-sdk-for-java sdk/cosmos/azure-cosmos/src/main/java/com/
// azure/cosmos/implementation/directconnectivity/rntbd/RntbdTokenType.java; .NET
// RntbdTokenTypes and Rust tokens.rs agree). A token is u16 id (little-endian), u8 type,
// then the value (Java RntbdToken.encode, HEADER_LENGTH = 3).
const (
	TypeByte        byte = 0x00 // 1 byte
	TypeUShort      byte = 0x01 // u16
	TypeULong       byte = 0x02 // u32
	TypeLong        byte = 0x03 // i32
	TypeULongLong   byte = 0x04 // u64
	TypeLongLong    byte = 0x05 // i64
	TypeGUID        byte = 0x06 // 16 bytes, Microsoft GUID byte order
	TypeSmallString byte = 0x07 // u8 length + bytes
	TypeString      byte = 0x08 // u16 length + bytes
	TypeULongString byte = 0x09 // u32 length + bytes
	TypeSmallBytes  byte = 0x0A // u8 length + bytes
	TypeBytes       byte = 0x0B // u16 length + bytes
	TypeULongBytes  byte = 0x0C // u32 length + bytes
	TypeFloat       byte = 0x0D // f32
	TypeDouble      byte = 0x0E // f64
	TypeInvalid     byte = 0xFF // no value
)

// Token is one decoded token: its id, its type and its value's bytes (without the length
// prefix of the variable-length types). A reader keeps tokens it has no meaning for,
// as Java's RntbdTokenStream.decode keeps them as UndefinedHeader: the service sends ids
// no SDK lists (0x0063 in the .NET vector, REFERENCE §1.3).
type Token struct {
	ID    uint16
	Type  byte
	Value []byte
}

// fixedSize is the value size of the fixed-length types; -1 for length-prefixed types
// and -2 for a type id that is not one of the sixteen.
func fixedSize(t byte) int {
	switch t {
	case TypeByte:
		return 1
	case TypeUShort:
		return 2
	case TypeULong, TypeLong, TypeFloat:
		return 4
	case TypeULongLong, TypeLongLong, TypeDouble:
		return 8
	case TypeGUID:
		return 16
	case TypeInvalid:
		return 0
	case TypeSmallString, TypeSmallBytes, TypeString, TypeBytes, TypeULongString, TypeULongBytes:
		return -1
	}
	return -2
}

// prefixSize is the length prefix of a variable-length type.
func prefixSize(t byte) int {
	switch t {
	case TypeSmallString, TypeSmallBytes:
		return 1
	case TypeString, TypeBytes:
		return 2
	}
	return 4
}

var errTruncated = errors.New("rntbd: token stream ends inside a token")

// decodeTokens reads a whole token stream. The stream has no count: it ends where the
// frame's length says (REFERENCE §1.4). Values alias b.
func decodeTokens(b []byte) ([]Token, error) {
	var out []Token
	for len(b) > 0 {
		if len(b) < 3 {
			return nil, errTruncated
		}
		t := Token{ID: binary.LittleEndian.Uint16(b), Type: b[2]}
		b = b[3:]
		n := fixedSize(t.Type)
		switch {
		case n == -2:
			return nil, fmt.Errorf("rntbd: token 0x%04X has unknown type 0x%02X", t.ID, t.Type)
		case n == -1:
			p := prefixSize(t.Type)
			if len(b) < p {
				return nil, errTruncated
			}
			var l uint64
			switch p {
			case 1:
				l = uint64(b[0])
			case 2:
				l = uint64(binary.LittleEndian.Uint16(b))
			default:
				l = uint64(binary.LittleEndian.Uint32(b))
			}
			b = b[p:]
			if l > uint64(len(b)) {
				return nil, errTruncated
			}
			n = int(l)
		}
		if len(b) < n {
			return nil, errTruncated
		}
		t.Value = b[:n:n]
		b = b[n:]
		out = append(out, t)
	}
	return out, nil
}

// appendToken encodes a token.
func appendToken(b []byte, t Token) []byte {
	b = binary.LittleEndian.AppendUint16(b, t.ID)
	b = append(b, t.Type)
	if fixedSize(t.Type) == -1 {
		switch prefixSize(t.Type) {
		case 1:
			b = append(b, byte(len(t.Value)))
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(len(t.Value)))
		default:
			b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Value)))
		}
	}
	return append(b, t.Value...)
}

// Uint is the value of an unsigned integer token (Byte, UShort, ULong, ULongLong).
func (t Token) Uint() (uint64, bool) {
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

// Int is the value of a signed integer token (Long, LongLong).
func (t Token) Int() (int64, bool) {
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
	switch t.Type {
	case TypeFloat:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(t.Value))), true
	case TypeDouble:
		return math.Float64frombits(binary.LittleEndian.Uint64(t.Value)), true
	}
	return 0, false
}

// Text renders any token's value as a header value would carry it: strings as they are,
// numbers in decimal, GUIDs in the canonical form, bytes in upper-case hex.
func (t Token) Text() string {
	if u, ok := t.Uint(); ok {
		return strconv.FormatUint(u, 10)
	}
	if i, ok := t.Int(); ok {
		return strconv.FormatInt(i, 10)
	}
	if f, ok := t.Float(); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	switch t.Type {
	case TypeGUID:
		var g [16]byte
		copy(g[:], t.Value)
		return FormatGUID(g)
	case TypeSmallBytes, TypeBytes, TypeULongBytes:
		return fmt.Sprintf("%X", t.Value)
	}
	return string(t.Value)
}

// Token constructors for the types the server writes.

func byteToken(id uint16, v byte) Token { return Token{ID: id, Type: TypeByte, Value: []byte{v}} }

func ulongToken(id uint16, v uint32) Token {
	return Token{ID: id, Type: TypeULong, Value: binary.LittleEndian.AppendUint32(nil, v)}
}

func longLongToken(id uint16, v int64) Token {
	return Token{ID: id, Type: TypeLongLong, Value: binary.LittleEndian.AppendUint64(nil, uint64(v))}
}

func doubleToken(id uint16, v float64) Token {
	return Token{ID: id, Type: TypeDouble, Value: binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))}
}

func smallStringToken(id uint16, s string) Token {
	if len(s) > 255 {
		s = s[:255]
	}
	return Token{ID: id, Type: TypeSmallString, Value: []byte(s)}
}

// stringToken is a String token, or a ULongString when the value does not fit a u16
// length (a reader takes either for a string).
func stringToken(id uint16, s string) Token {
	if len(s) > math.MaxUint16 {
		return Token{ID: id, Type: TypeULongString, Value: []byte(s)}
	}
	return Token{ID: id, Type: TypeString, Value: []byte(s)}
}

// FormatGUID renders 16 bytes in Microsoft GUID order (Data1 u32 LE, Data2 u16 LE,
// Data3 u16 LE, Data4 as is: .NET Guid.ToByteArray, pinned by Java
// RntbdTokenTypeTests.uuidConversion and the activity id of the .NET vector, REFERENCE
// §1.2, §1.10, §1.13) as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func FormatGUID(g [16]byte) string {
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x",
		binary.LittleEndian.Uint32(g[0:4]), binary.LittleEndian.Uint16(g[4:6]),
		binary.LittleEndian.Uint16(g[6:8]), g[8:10], g[10:16])
}

// ParseGUID is the inverse of FormatGUID; braces and case are accepted.
func ParseGUID(s string) ([16]byte, bool) {
	var g [16]byte
	if len(s) == 38 && s[0] == '{' && s[37] == '}' {
		s = s[1:37]
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return g, false
	}
	hex := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	var raw [16]byte
	for i := range raw {
		v, err := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
		if err != nil {
			return g, false
		}
		raw[i] = byte(v)
	}
	// raw is big-endian text order; the first three groups are little-endian on the wire.
	g[0], g[1], g[2], g[3] = raw[3], raw[2], raw[1], raw[0]
	g[4], g[5] = raw[5], raw[4]
	g[6], g[7] = raw[7], raw[6]
	copy(g[8:], raw[8:])
	return g, true
}
