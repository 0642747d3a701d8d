package cosmos

import (
	"net/url"
	"strings"
	"sync"
	"testing"
)

// The vector from Microsoft's "Access control in the Azure Cosmos DB SQL API" page.
func TestMasterKeySignatureMatchesMicrosoftVector(t *testing.T) {
	k, err := NewMasterKey("dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==")
	if err != nil {
		t.Fatal(err)
	}
	const want = "c09PEVJrgp2uQRkr934kFbTqhByc7TVr3OHyqlu+c+c="
	if got := k.Signature("GET", "dbs", "dbs/ToDoList", "Thu, 27 Apr 2017 00:51:12 GMT"); got != want {
		t.Fatalf("signature = %s, want %s", got, want)
	}
	// The HMAC states are reused: every signature, after others and beside others, is
	// still the vector's, and a long resource link signs as a short one does.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k.Signature("POST", "docs", "dbs/d/colls/c/"+strings.Repeat("x", g*100+i), "Mon, 30 Nov 2026 03:21:17 GMT")
				if got := k.Signature("GET", "dbs", "dbs/ToDoList", "Thu, 27 Apr 2017 00:51:12 GMT"); got != want {
					t.Errorf("signature after others = %s, want %s", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestAuthorizeRoundTripsThroughParse(t *testing.T) {
	k, _ := NewMasterKey(EmulatorKey)
	h, _ := k.Authorize("POST", "docs", "dbs/d/colls/c", "Mon, 30 Nov 2026 03:21:17 GMT")
	tok, err := ParseAuthorization(h)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Type != "master" || tok.Version != "1.0" {
		t.Fatalf("token = %+v", tok)
	}
	if !k.Verify(tok.Signature, "post", "DOCS", "dbs/d/colls/c", "mon, 30 nov 2026 03:21:17 gmt") {
		t.Fatal("signature does not verify with case-insensitive verb, type and date")
	}
	if k.Verify(tok.Signature, "POST", "docs", "dbs/d/colls/C", "Mon, 30 Nov 2026 03:21:17 GMT") {
		t.Fatal("resource link must keep its case")
	}
}

func TestParseAuthorizationAcceptsEveryClientEncoding(t *testing.T) {
	sig := "a+b/c=="
	cases := map[string]string{
		"upper-case escapes": url.QueryEscape("type=master&ver=1.0&sig=" + sig),
		"lower-case escapes": strings.ToLower(url.QueryEscape("type=master&ver=1.0&sig=" + sig)),
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			tok, err := ParseAuthorization(h)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Signature != sig {
				t.Fatalf("signature = %q, want %q", tok.Signature, sig)
			}
		})
	}
	tok, err := ParseAuthorization("type=aad&ver=1.0&sig=eyJ0eXAi.eyJhdWQi.sig")
	if err != nil || tok.Type != "aad" || tok.Signature != "eyJ0eXAi.eyJhdWQi.sig" {
		t.Fatalf("aad token = %+v, %v", tok, err)
	}
}

func TestParseAuthorizationRejectsGarbage(t *testing.T) {
	for _, h := range []string{"", "garbage", "type=master", "%zz", "sig=abc"} {
		if _, err := ParseAuthorization(h); err == nil {
			t.Errorf("ParseAuthorization(%q) accepted", h)
		}
	}
}

func TestMasterKeyNeverPrintsTheKey(t *testing.T) {
	k, _ := NewMasterKey(EmulatorKey)
	if s := k.String(); strings.Contains(s, "C2y6") {
		t.Fatalf("String() leaks the key: %s", s)
	}
	if _, err := NewMasterKey("not base64!"); err == nil || strings.Contains(err.Error(), "not base64!") {
		t.Fatalf("bad key error must not echo the key: %v", err)
	}
}

func FuzzParseAuthorization(f *testing.F) {
	f.Add("type%3Dmaster%26ver%3D1.0%26sig%3Dabc")
	f.Add("type=aad&ver=1.0&sig=x.y.z")
	f.Add("%")
	f.Fuzz(func(t *testing.T, h string) {
		tok, err := ParseAuthorization(h)
		if err == nil && (tok.Type == "" || tok.Signature == "") {
			t.Fatalf("accepted token without type or signature: %+v", tok)
		}
	})
}
