package jsondoc

// refuseUnsupportedConstructs names the Cosmos SQL constructs the emulator does
// not serve before the grammar meets them, so the 400 says "LIKE is not
// supported" rather than what the grammar made of the first token it could not
// place. A word after a dot is a property name (c.like), not a keyword. (JOIN,
// EXISTS, ARRAY and other subqueries are served: query_from.go, subquery.go.)
func (p *sqlParser) refuseUnsupportedConstructs() error {
	for i, t := range p.toks {
		if t.kind != tokIdent || (i > 0 && isPunct(p.toks[i-1], ".")) {
			continue
		}
		switch {
		case isKeyword(t, "IN") && i+2 < len(p.toks) && isPunct(p.toks[i+1], "(") && isKeyword(p.toks[i+2], "SELECT") &&
			!(i >= 2 && (isKeyword(p.toks[i-2], "JOIN") || isKeyword(p.toks[i-2], "FROM"))):
			return unsupportedf("IN (SELECT …) at offset %d: IN takes a list of values; test an array with EXISTS(SELECT VALUE x FROM x IN c.arr WHERE …)", t.pos)
		case isKeyword(t, "udf") && i+1 < len(p.toks) && isPunct(p.toks[i+1], "."):
			return unsupportedf("user-defined functions (udf. at offset %d) are not supported", t.pos)
		}
	}
	return nil
}
