package emulator

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// systemProperties are set by the service on every stored document; a client cannot
// write or patch them.
var systemProperties = []string{"_rid", "_self", "_etag", "_attachments", "_ts"}

func isSystemProperty(name string) bool {
	for _, p := range systemProperties {
		if p == name {
			return true
		}
	}
	return false
}

// withSystemProperties returns body (a JSON object) with the system properties replaced
// by the stored document's, keeping the client's property order.
func withSystemProperties(body []byte, rid string, c *container, etag string, ts int64) ([]byte, *cosmos.Error) {
	doc, err := jsondoc.ParseObject(body)
	if err != nil {
		return nil, badRequest("the document is not valid JSON: %v", err)
	}
	for _, p := range systemProperties {
		doc.Delete(p)
	}
	doc.Set("_rid", jsondoc.String(rid))
	doc.Set("_self", jsondoc.String(c.meta.Self+"docs/"+rid+"/"))
	doc.Set("_etag", jsondoc.String(etag))
	doc.Set("_attachments", jsondoc.String("attachments/"))
	doc.Set("_ts", jsondoc.Number(strconv.FormatInt(ts, 10)))
	return doc.AppendJSON(make([]byte, 0, len(body)+160)), nil
}

// newETag returns a fresh quoted etag in the service's GUID-like shape.
func newETag() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return `"` + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32] + `"`
}
