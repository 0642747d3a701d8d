package emulator

// The request-charge model. Real accounts charge by the work a request does; the
// emulator uses a small deterministic model with the same shape, so that RU totals in
// diagnostics and hedge-test reports are reproducible and comparable:
//
//	point read (found)             1.00 RU per started KB of the document
//	point read (404), 304          1.00 RU
//	create, upsert, replace        5.00 RU per started KB of the stored document
//	patch                          10.00 RU + 5.00 per started KB beyond the first
//	delete                         5.00 RU
//	query, read feed               2.50 RU + 0.10 per document examined + 1.00 per started KB returned
//	query plan                     0 RU (the gateway computes it; no partition is read)
//	409, 412 on a write            1.24 RU (the service read the document to find out)
//	metadata (databases, containers, pkranges, addresses)  1.00 RU
//	account (GET /), 400, 401, 403, 413, 429, 503 and other rejected requests  0 RU
//
// What a query page examined depends on its form, and never on whether the emulator
// had a result cached: a streaming query (SELECT with WHERE, no ORDER BY, DISTINCT,
// aggregates or GROUP BY) examines the documents its scan passed; an ORDER BY page the
// rows it stepped over in the sorted order (as an index would serve them, OFFSET's
// skipped rows included); the first page of a DISTINCT, aggregate or GROUP BY query
// every document of its partition key range or partition key, and its later pages the
// rows they returned or skipped.
const (
	chargeQueryPlan = 0.00
	chargeMetadata  = 1.00
	chargeConflict  = 1.24
	chargeDelete    = 5.00
)

func startedKB(n int) float64 {
	kb := (n + 1023) / 1024
	if kb < 1 {
		kb = 1
	}
	return float64(kb)
}

func chargeRead(size int) float64  { return startedKB(size) }
func chargeWrite(size int) float64 { return 5 * startedKB(size) }
func chargePatch(size int) float64 { return 10 + 5*(startedKB(size)-1) }

func chargeQuery(scanned, returnedBytes int) float64 {
	c := 2.5 + 0.1*float64(scanned)
	if returnedBytes > 0 {
		c += startedKB(returnedBytes)
	}
	return c
}
