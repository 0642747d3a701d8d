package engine

import (
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// checkConsistency settles the level an operation asks for against the account's: a
// read may relax it, never strengthen it. The SDKs refuse a stronger level before the
// request ("ConsistencyLevel Strong specified in the request is invalid when service
// is configured with consistency level Session…": .NET RMResources.InvalidConsistencyLevel,
// Java GatewayServiceConfigurationReader), and the service answers one with a 400; so
// does the engine, before the first request, naming the levels that would do.
//
// cosmosctl keeps no session of its own: like azcosmos v1.5.0, which sends
// x-ms-session-token only when the caller gives one (ItemOptions.SessionToken), it
// sends none at any level, so a 404/1002 (a region behind the session) never answers
// it; were one to, it stays a transient result tried in another region.
func checkConsistency(op *Operation, acct *cosmos.Account) error {
	if op.Consistency == "" {
		return nil
	}
	level, err := cosmos.ParseConsistency(op.Consistency)
	if err != nil {
		return inputErrorf("%v", err)
	}
	if op.Kind.IsWrite() {
		return inputErrorf("a %s cannot ask for consistency %s: a write is made at the account's level (reads, queries and the change feed may relax it)", op.Kind, level)
	}
	account := acct.UserConsistencyPolicy.DefaultConsistencyLevel
	if account == "" {
		account = cosmos.ConsistencySession
	}
	if !cosmos.ConsistencyAllowed(account, level) {
		return inputErrorf("consistency %s is stronger than the account's %s: a read may only relax the account's level (use %s)", level, account, strings.Join(cosmos.ConsistencyWeaker(account), ", "))
	}
	op.Consistency = level
	return nil
}

// setConsistency asks for the operation's level on a read request.
func setConsistency(req *cosmos.Request, op *Operation) {
	if op.Consistency != "" && !op.Kind.IsWrite() && op.Kind != OpQueryPlan {
		req.Header.Set(cosmos.HeaderConsistencyLevel, op.Consistency)
	}
}
