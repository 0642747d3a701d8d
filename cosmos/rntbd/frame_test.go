package rntbd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// frame builds a response by hand: the length field, status 200, a zero activity id, the
// token bytes and whatever follows the frame.
func frame(length int, tokens []byte, after ...byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(length))
	b = binary.LittleEndian.AppendUint32(b, 200)
	b = append(b, make([]byte, 16)...)
	b = append(b, tokens...)
	return append(b, after...)
}

// payloadAbsent is response token PayloadPresent (0x0000, Byte) = 0.
var payloadAbsent = []byte{0x00, 0x00, 0x00, 0x00}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestDecodeResponseErrors(t *testing.T) {
	cases := []struct {
		name       string
		in         []byte
		want       string
		incomplete bool
	}{
		{"empty buffer", nil, "rntbd: incomplete frame: response needs 4 bytes for its length, have 0", true},
		{"length shorter than the header", frame(23, nil), "rntbd: response length 23 is shorter than the 24-byte header", false},
		{"length past the buffer", frame(40, payloadAbsent), "rntbd: incomplete frame: response length is 40, only 28 bytes", true},
		{"token header cut by the frame length", frame(24+4+2, cat(payloadAbsent, []byte{0x15, 0x00})),
			"rntbd: token header needs 3 bytes, 2 left in the frame (in the response)", false},
		{"token value past the frame",
			frame(24+4+3+2+12, cat(payloadAbsent, []byte{0x17, 0x00, 0x08, 0x2C, 0x01}, make([]byte, 12)), make([]byte, 300)...),
			"rntbd: token 0x0017 (OwnerFullName) claims 300 bytes, 12 left in the frame (in the response)", false},
		{"unknown token value past the frame",
			frame(24+4+3+1+2, cat(payloadAbsent, []byte{0x99, 0x00, 0x07, 0x05, 'a', 'b'})),
			"rntbd: token 0x0099 claims 5 bytes, 2 left in the frame (in the response)", false},
		{"fixed-width value past the frame", frame(24+4+3+2, cat(payloadAbsent, []byte{0x15, 0x00, 0x0E, 1, 2})),
			"rntbd: token 0x0015 (RequestCharge) of type Double needs 8 bytes, 2 left in the frame (in the response)", false},
		{"type no SDK defines", frame(24+4+3, cat(payloadAbsent, []byte{0x44, 0x01, 0x20})),
			"rntbd: token 0x0144 has unknown type 0x20; the rest of the frame cannot be read (in the response)", false},
		{"known token with another type", frame(24+4+4, cat(payloadAbsent, []byte{0x15, 0x00, 0x00, 0x01})),
			"rntbd: token 0x0015 (RequestCharge) has type Byte, want Double (in the response)", false},
		{"no PayloadPresent token", frame(24, nil), "rntbd: required token 0x0000 (PayloadPresent) is missing (in the response)", false},
		{"payload length missing", frame(28, []byte{0, 0, 0, 1}, 2, 0), "rntbd: incomplete frame: response payload length needs 4 bytes after the 28-byte frame, have 2", true},
		{"payload shorter than its length", frame(28, []byte{0, 0, 0, 1}, 5, 0, 0, 0, '{', '}'),
			"rntbd: incomplete frame: response payload length is 5, only 2 bytes follow", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, n, err := DecodeResponse(c.in)
			if err == nil || err.Error() != c.want {
				t.Fatalf("error %v\nwant %q", err, c.want)
			}
			if n != 0 {
				t.Errorf("consumed %d bytes on error", n)
			}
			if errors.Is(err, ErrIncomplete) != c.incomplete {
				t.Errorf("errors.Is(ErrIncomplete) = %v", !c.incomplete)
			}
		})
	}
}

func TestEveryPrefixOfTheDotNetVectorIsIncomplete(t *testing.T) {
	raw := dotnet201(t)
	for i := range raw {
		if _, _, err := DecodeResponse(raw[:i]); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("prefix of %d bytes: %v, want ErrIncomplete", i, err)
		}
	}
}

func TestDecodeLeavesTheNextFrameAlone(t *testing.T) {
	raw := dotnet201(t)
	two := cat(raw, raw)
	r, n, err := DecodeResponse(two)
	if err != nil || n != len(raw) || len(r.Payload) != 317 {
		t.Fatalf("n %d err %v", n, err)
	}
	if _, m, err := DecodeResponse(two[n:]); err != nil || m != len(raw) {
		t.Fatalf("second frame: n %d err %v", m, err)
	}
}

func TestPayloadPresentRule(t *testing.T) {
	activity := uuid.MustParse("df11be08-6d0f-49e3-aca7-691fa0c93677")
	t.Run("no body when PayloadPresent is 0", func(t *testing.T) {
		r := Request{ResourceType: 3, OperationType: 3, ActivityID: activity, Tokens: []Token{BoolToken(ReqPayloadPresent, false)}}
		b, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 24+4 || binary.LittleEndian.Uint32(b) != 28 {
			t.Fatalf("frame %x", b)
		}
		got, n, err := DecodeRequest(cat(b, []byte("next")))
		if err != nil || n != 28 || got.Payload != nil {
			t.Fatalf("n %d payload %q err %v", n, got.Payload, err)
		}
	})
	t.Run("length prefix and body when PayloadPresent is 1; the frame length excludes them", func(t *testing.T) {
		r := Request{ResourceType: 3, OperationType: 1, ActivityID: activity,
			Tokens: []Token{BoolToken(ReqPayloadPresent, true)}, Payload: []byte(`{"id":"a"}`)}
		b, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if binary.LittleEndian.Uint32(b) != 28 || binary.LittleEndian.Uint32(b[28:]) != 10 || len(b) != 28+4+10 {
			t.Fatalf("frame %x", b)
		}
	})
	t.Run("an empty body still has its length", func(t *testing.T) {
		r := Response{Status: 204, Tokens: []Token{BoolToken(RespPayloadPresent, true)}}
		b, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, n, err := DecodeResponse(b)
		if err != nil || n != 32 || got.Payload == nil || len(got.Payload) != 0 {
			t.Fatalf("n %d payload %v err %v", n, got.Payload, err)
		}
	})
	t.Run("a body without PayloadPresent 1 is refused", func(t *testing.T) {
		r := Request{Tokens: []Token{BoolToken(ReqPayloadPresent, false)}, Payload: []byte("{}")}
		_, err := r.Encode()
		if err == nil || err.Error() != "rntbd: request has a 2-byte payload but its PayloadPresent token is 0" {
			t.Fatal(err)
		}
	})
	t.Run("a request without PayloadPresent is refused", func(t *testing.T) {
		r := Request{Tokens: []Token{ULongToken(ReqPageSize, 1)}}
		_, err := r.Encode()
		if err == nil || err.Error() != "rntbd: request has no PayloadPresent token (0x0002)" {
			t.Fatal(err)
		}
	})
}

func TestEncodeNamesTheFrameOfABadToken(t *testing.T) {
	r := Request{Tokens: []Token{BoolToken(ReqPayloadPresent, false), StringToken(ReqDate, TypeSmallString, strings.Repeat("x", 300))}}
	b, err := r.AppendEncode([]byte("keep"))
	if err == nil || !strings.HasSuffix(err.Error(), "(in the request)") {
		t.Fatal(err)
	}
	if string(b) != "keep" {
		t.Errorf("dst after a failed encode: %q", b)
	}
}

func TestContextNegotiationRoundTrip(t *testing.T) {
	activity := uuid.MustParse(javaGUIDText)
	req := NewContextRequest(activity, "2018-12-31", "cosmosctl/1.0", BoolToken(CtxReqEnableChannelMultiplexing, true))
	b, err := req.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// length · Connection/Connection · activity · ProtocolVersion ULong 1 · ClientVersion · UserAgent · multiplexing.
	wantLen := 24 + (3 + 4) + (3 + 1 + 10) + (3 + 1 + 13) + (3 + 1)
	if len(b) != wantLen || binary.LittleEndian.Uint32(b) != uint32(wantLen) || !bytes.Equal(b[4:8], []byte{0, 0, 0, 0}) || !bytes.Equal(b[8:24], javaGUIDWire[:]) {
		t.Fatalf("context request %x", b)
	}
	if !bytes.Equal(b[24:31], []byte{0x00, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00}) {
		t.Errorf("ProtocolVersion token %x", b[24:31])
	}
	got, n, err := DecodeContextRequest(b)
	if err != nil || n != len(b) || got.ActivityID != activity || len(got.Tokens) != 4 {
		t.Fatalf("decoded %+v n %d err %v", got, n, err)
	}
	if again, _ := got.Encode(); !bytes.Equal(again, b) {
		t.Errorf("re-encoded %x", again)
	}

	ok := ContextResponse{Status: 200, ActivityID: activity, Tokens: []Token{
		StringToken(CtxRespServerAgent, TypeSmallString, "RntbdServer"),
		StringToken(CtxRespServerVersion, TypeSmallString, "2.0"),
		ULongToken(CtxRespIdleTimeoutInSeconds, 1800),
	}}
	b, err = ok.Encode()
	if err != nil {
		t.Fatal(err)
	}
	resp, n, err := DecodeContextResponse(cat(b, []byte{0xFF}))
	if err != nil || n != len(b) || resp.Failed() || resp.ServerAgent() != "RntbdServer" || resp.ServerVersion() != "2.0" || resp.IdleTimeoutSeconds() != 1800 {
		t.Fatalf("decoded %+v n %d err %v", resp, n, err)
	}

	failed := ContextResponse{Status: 400, ActivityID: activity,
		Tokens:    []Token{StringToken(CtxRespClientVersion, TypeSmallString, "2020-07-15")},
		ErrorBody: []byte(`{"code":"BadRequest","message":"client version too old"}`)}
	b, err = failed.Encode()
	if err != nil {
		t.Fatal(err)
	}
	resp, n, err = DecodeContextResponse(b)
	if err != nil || n != len(b) || !resp.Failed() || string(resp.ErrorBody) != string(failed.ErrorBody) {
		t.Fatalf("decoded %+v n %d err %v", resp, n, err)
	}
}

func TestContextErrors(t *testing.T) {
	activity := uuid.New()
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"context request without UserAgent", func() error {
			c := ContextRequest{ActivityID: activity, Tokens: []Token{ULongToken(0, 1), StringToken(1, TypeSmallString, "v")}}
			_, err := c.Encode()
			return err
		}, "rntbd: required token 0x0002 (UserAgent) is missing (in the context request)"},
		{"a user request is not a context request", func() error {
			_, _, err := DecodeContextRequest(rustRead(t))
			return err
		}, "rntbd: context request has resource type 0x0003 and operation type 0x0003, want Connection (0x0000) for both"},
		{"successful context response without ServerVersion", func() error {
			b, _ := (&ContextResponse{Status: 400, Tokens: []Token{StringToken(CtxRespServerAgent, TypeSmallString, "a")}}).Encode()
			binary.LittleEndian.PutUint32(b[4:], 200)
			_, _, err := DecodeContextResponse(b[:binary.LittleEndian.Uint32(b)])
			return err
		}, "rntbd: required token 0x0003 (ServerVersion) is missing (in the context response)"},
		{"error body on a successful context response", func() error {
			c := ContextResponse{Status: 200, ErrorBody: []byte("{}")}
			_, err := c.Encode()
			return err
		}, "rntbd: context response with status 200 carries a 2-byte error body; only a failed negotiation has one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.run(); err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant %q", err, c.want)
			}
		})
	}
}

func TestMissingRequiredTokensAreNamedInIDOrder(t *testing.T) {
	for range 20 {
		c := ContextRequest{}
		_, err := c.Encode()
		if err == nil || err.Error() != "rntbd: required token 0x0000 (ProtocolVersion) is missing (in the context request)" {
			t.Fatal(err)
		}
	}
}
