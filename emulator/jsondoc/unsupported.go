package jsondoc

// refuseUnsupportedConstructs names the Cosmos SQL constructs the emulator does
// not serve before the grammar meets them, so the 400 says "JOIN is not
// supported" rather than what the grammar made of the first token it could not
// place (for a JOIN that was the advice to write c.t for t, which changes the
// query's meaning). A word after a dot is a property name (c.join), not a
// keyword.
func (p *sqlParser) refuseUnsupportedConstructs() error {
	for i, t := range p.toks {
		if t.kind != tokIdent || (i > 0 && isPunct(p.toks[i-1], ".")) {
			continue
		}
		switch {
		case isKeyword(t, "JOIN"):
			return unsupportedf("JOIN at offset %d is not supported", t.pos)
		case isKeyword(t, "EXISTS"), isKeyword(t, "ARRAY") && i+1 < len(p.toks) && isPunct(p.toks[i+1], "("):
			return unsupportedf("%s subqueries (offset %d) are not supported", t.text, t.pos)
		case i > 0 && isKeyword(t, "SELECT"):
			return unsupportedf("subqueries (SELECT at offset %d) are not supported", t.pos)
		case isKeyword(t, "udf") && i+1 < len(p.toks) && isPunct(p.toks[i+1], "."):
			return unsupportedf("user-defined functions (udf. at offset %d) are not supported", t.pos)
		}
	}
	return nil
}
