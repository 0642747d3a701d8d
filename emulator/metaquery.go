package emulator

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// Metadata beyond databases and containers: queries on the databases and containers
// feeds (databases.query, containers.query, the Go SDK's NewQueryDatabasesPager), the
// offers that hold throughput (offers.go), and a clear refusal for the resources the
// emulator does not implement.

// unsupportedResource names the kind of resource segs address when the emulator does not
// implement it: stored procedures, user-defined functions, triggers, users and
// permissions. The service has them, so a 404 would tell an application "it does not
// exist" when the truth is "the emulator cannot do it".
func unsupportedResource(segs []string) string {
	if len(segs) < 3 || segs[0] != cosmos.TypeDatabases {
		return ""
	}
	if segs[2] == cosmos.TypeUsers {
		if len(segs) >= 5 && segs[4] == "permissions" {
			return "permissions"
		}
		return "users"
	}
	if len(segs) >= 5 && segs[2] == cosmos.TypeContainers {
		switch segs[4] {
		case "sprocs":
			return "stored procedures"
		case "udfs":
			return "user-defined functions"
		case "triggers":
			return "triggers"
		}
	}
	return ""
}

// serveMetadataExtras answers what serveMetadata does not: it reports whether it did.
func (s *Server) serveMetadataExtras(req *request, segs []string) bool {
	if what := unsupportedResource(segs); what != "" {
		s.writeError(req, badRequest("%s are not supported by the emulator (cosmosctl emulator serves databases, containers, documents, batch, change feed and offers); run code like this against a real account or the Microsoft emulator", what), 0)
		return true
	}
	if len(segs) > 0 && segs[0] == offersFeed {
		s.serveOffers(req, segs)
		return true
	}
	if req.r.Method == http.MethodPost && isQuery(req.r) {
		switch len(segs) {
		case 1:
			s.serveDatabaseQuery(req)
			return true
		case 3:
			s.serveContainerQuery(req, segs[1])
			return true
		}
	}
	return false
}

// metaQuery is a query on a metadata feed, bound to its parameters.
type metaQuery struct {
	prog *jsondoc.Program
}

// parseMetaQuery reads a query body; ok is false once an error has been answered.
func (s *Server) parseMetaQuery(req *request) (*metaQuery, bool) {
	if strings.EqualFold(req.r.Header.Get(cosmos.HeaderQueryPlanRequest), "true") {
		s.writeError(req, badRequest("query plans are for queries on documents; the emulator answers queries on databases and containers directly"), 0)
		return nil, false
	}
	body, ok := s.readBody(req)
	if !ok {
		return nil, false
	}
	var spec cosmos.QuerySpec
	if err := json.Unmarshal(body, &spec); err != nil {
		s.writeError(req, badRequest("the query body is not valid JSON: %v (expected {\"query\": \"SELECT …\", \"parameters\": […]})", err), 0)
		return nil, false
	}
	prog, ok := s.compileQuery(req, spec, jsondoc.BindOptions{})
	if !ok {
		return nil, false
	}
	return &metaQuery{prog: prog}, true
}

// filter returns the query's rows over resources (as JSON), in order.
func (mq *metaQuery) filter(resources []any) ([]json.RawMessage, error) {
	docs := make([]jsondoc.Doc, len(resources))
	for i, r := range resources {
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		docs[i] = jsondoc.Doc{Seq: uint64(i + 1), Body: raw}
	}
	rows, err := mq.prog.Run(docs)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out, nil
}

// answerMetaQuery runs mq over resources and answers with the feed body the service
// sends: {"_rid", "<feed>": […], "_count"}.
func (s *Server) answerMetaQuery(req *request, mq *metaQuery, rid, feed string, resources []any) {
	matched, err := mq.filter(resources)
	if err != nil {
		s.writeError(req, badRequest("%v", err), 0)
		return
	}
	// The rows of a query come in the feed's order, so a page is cut by row number.
	from, to, next, ok := s.feedPage(req, "query/"+feed+"/"+rid, indexKeys(len(matched)))
	if !ok {
		return
	}
	body, _ := json.Marshal(map[string]any{"_rid": rid, feed: matched[from:to], "_count": to - from})
	s.writeFeedPage(req, body, to-from, next)
}

func (s *Server) serveDatabaseQuery(req *request) {
	mq, ok := s.parseMetaQuery(req)
	if !ok {
		return
	}
	dbs := s.store.listDatabases()
	res := make([]any, len(dbs))
	for i := range dbs {
		res[i] = dbs[i]
	}
	s.answerMetaQuery(req, mq, "", "Databases", res)
}

func (s *Server) serveContainerQuery(req *request, db string) {
	mq, ok := s.parseMetaQuery(req)
	if !ok {
		return
	}
	colls, err := s.store.listContainers(db)
	if err != nil {
		s.writeError(req, err, chargeMetadata)
		return
	}
	res := make([]any, len(colls))
	for i := range colls {
		res[i] = colls[i]
	}
	rid := ""
	if d := s.store.database(db); d != nil {
		rid = d.meta.RID
	}
	s.answerMetaQuery(req, mq, rid, "DocumentCollections", res)
}
