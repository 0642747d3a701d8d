package rntbd

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestTokenTypesEncodeAndDecode(t *testing.T) {
	id := uuid.MustParse(javaGUIDText)
	cases := []struct {
		name  string
		token Token
		wire  string // id LE, type, [length], value
		check func(Token) bool
	}{
		{"Byte", ByteToken(0x0010, 2), "100000" + "02",
			func(t Token) bool { v, ok := t.Uint(); return ok && v == 2 }},
		{"Byte as a boolean", BoolToken(0x0002, true), "020000" + "01",
			func(t Token) bool { v, ok := t.Uint(); return ok && v == 1 }},
		{"UShort", UShortToken(0x0102, 0xBEEF), "020101" + "efbe",
			func(t Token) bool { v, ok := t.Uint(); return ok && v == 0xBEEF }},
		{"ULong", ULongToken(0x0004, 256), "040002" + "00010000",
			func(t Token) bool { v, ok := t.Uint(); return ok && v == 256 }},
		{"Long", LongToken(0x0005, -2), "050003" + "feffffff",
			func(t Token) bool { v, ok := t.Int(); return ok && v == -2 }},
		{"ULongLong", ULongLongToken(0x0006, 1<<40), "060004" + "0000000000010000",
			func(t Token) bool { v, ok := t.Uint(); return ok && v == 1<<40 }},
		{"LongLong", LongLongToken(0x0078, -1), "780005" + "ffffffffffffffff",
			func(t Token) bool { v, ok := t.Int(); return ok && v == -1 }},
		{"Guid in Microsoft byte order", GUIDToken(0x0007, id), "070006" + "cc22338f8617b44d9b97b229c2c6f0aa",
			func(t Token) bool { v, ok := t.GUID(); return ok && v == id }},
		{"SmallString", StringToken(0x0003, TypeSmallString, "abc"), "030007" + "03" + "616263",
			func(t Token) bool { v, ok := t.Str(); return ok && v == "abc" }},
		{"String", StringToken(0x003E, TypeString, "-1#10"), "3e0008" + "0500" + "2d31233130",
			func(t Token) bool { v, ok := t.Str(); return ok && v == "-1#10" }},
		{"ULongString", StringToken(0x0008, TypeULongString, "x"), "080009" + "01000000" + "78",
			func(t Token) bool { v, ok := t.Str(); return ok && v == "x" }},
		{"SmallBytes", BytesToken(0x0009, TypeSmallBytes, []byte{1, 2}), "09000a" + "02" + "0102",
			func(t Token) bool { return string(t.Value) == "\x01\x02" }},
		{"Bytes", BytesToken(0x005A, TypeBytes, []byte{0xAB}), "5a000b" + "0100" + "ab",
			func(t Token) bool { return string(t.Value) == "\xab" }},
		{"ULongBytes", BytesToken(0x000A, TypeULongBytes, nil), "0a000c" + "00000000",
			func(t Token) bool { return len(t.Value) == 0 }},
		{"Float", FloatToken(0x000B, 1.5), "0b000d" + "0000c03f",
			func(t Token) bool { v, ok := t.Float(); return ok && v == 1.5 }},
		{"Double", DoubleToken(0x0015, 7.0), "15000e" + "0000000000001c40",
			func(t Token) bool { v, ok := t.Float(); return ok && v == 7 }},
		{"Invalid has no value", Token{ID: 0x000C, Type: TypeInvalid}, "0c00ff",
			func(t Token) bool { return len(t.Value) == 0 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, n, err := appendTokens(nil, []Token{c.token})
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(b); got != c.wire || n != len(b) {
				t.Fatalf("encoded %s (%d), want %s", got, n, c.wire)
			}
			got, used, err := readToken(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if used != len(b) || got.ID != c.token.ID || got.Type != c.token.Type {
				t.Fatalf("decoded %+v using %d bytes", got, used)
			}
			if !c.check(got) {
				t.Errorf("decoded value %x does not read back", got.Value)
			}
		})
	}
}

func TestTokenAccessorsRefuseOtherTypes(t *testing.T) {
	s := StringToken(1, TypeString, "12345678")
	if _, ok := s.Uint(); ok {
		t.Error("Uint of a String")
	}
	if _, ok := s.Int(); ok {
		t.Error("Int of a String")
	}
	if _, ok := s.Float(); ok {
		t.Error("Float of a String")
	}
	if _, ok := s.GUID(); ok {
		t.Error("GUID of a String")
	}
	if _, ok := ULongToken(1, 1).Str(); ok {
		t.Error("Str of a ULong")
	}
	if _, ok := (Token{ID: 1, Type: TypeULong, Value: []byte{1}}).Uint(); ok {
		t.Error("Uint of a ULong holding one byte")
	}
}

func TestTokenEncodeRejectsValuesThatDoNotFit(t *testing.T) {
	cases := []struct {
		name  string
		token Token
		want  string
	}{
		{"SmallString over 255 bytes", StringToken(0x0001, TypeSmallString, strings.Repeat("a", 256)),
			"rntbd: token 0x0001 of type SmallString holds 256 bytes, more than its 1-byte length prefix allows (255)"},
		{"Bytes over 65535 bytes", BytesToken(0x005A, TypeBytes, make([]byte, 65536)),
			"rntbd: token 0x005A of type Bytes holds 65536 bytes, more than its 2-byte length prefix allows (65535)"},
		{"ULong of three bytes", Token{ID: 0x0004, Type: TypeULong, Value: []byte{1, 2, 3}},
			"rntbd: token 0x0004 of type ULong holds 3 bytes, want 4"},
		{"type no SDK defines", Token{ID: 0x0004, Type: 0x20},
			"rntbd: token 0x0004 has unknown type 0x20"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := appendTokens(nil, []Token{c.token})
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestTokenTypeNames(t *testing.T) {
	if TypeGUID.String() != "Guid" || TokenType(0x42).String() != "TokenType(0x42)" {
		t.Errorf("names %s %s", TypeGUID, TokenType(0x42))
	}
}
