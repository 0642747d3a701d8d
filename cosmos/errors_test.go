package cosmos

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestErrorFromResponseReadsEveryField(t *testing.T) {
	h := http.Header{}
	h.Set(HeaderSubStatus, "3")
	h.Set(HeaderActivityID, "a1")
	h.Set(HeaderRequestCharge, "1.24")
	h.Set(HeaderRetryAfterMs, "150")
	body := []byte(`{"code":"Forbidden","message":"The requested operation cannot be performed at this region\r\nActivityId: a1, Microsoft.Azure.Documents.Common/2.14.0"}`)
	e := ErrorFromResponse(403, h, body)
	if e.StatusCode != 403 || e.SubStatus != 3 || e.ActivityID != "a1" || e.RequestCharge != 1.24 || e.RetryAfter != 150*time.Millisecond || e.Code != "Forbidden" {
		t.Fatalf("decoded %+v", e)
	}
	want := "403/3 Forbidden: The requested operation cannot be performed at this region (activity id a1)"
	if got := e.Error(); got != want {
		t.Fatalf("Error() = %q\nwant      %q", got, want)
	}
	st, sub, ok := Status(fmt.Errorf("wrapped: %w", e))
	if !ok || st != 403 || sub != 3 {
		t.Fatalf("Status through wrapping = %d/%d %v", st, sub, ok)
	}
}

func TestErrorFromResponseToleratesNonCosmosBodies(t *testing.T) {
	e := ErrorFromResponse(502, http.Header{}, []byte("<html>Bad Gateway</html>"))
	if e.Message != "<html>Bad Gateway</html>" || e.Code != "" {
		t.Fatalf("decoded %+v", e)
	}
	if got := e.Error(); got != "502 BadGateway: <html>Bad Gateway</html>" {
		t.Fatalf("Error() = %q", got)
	}
}
