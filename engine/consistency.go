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
// cosmosctl keeps no session of its own and sends no x-ms-session-token at any level.
// The SDKs send one only under Session: .NET when the read's effective level (its
// override, else the account's) is Session (GatewayStoreModel.ApplySessionToken), JS
// 4.10.1 only when the request's x-ms-consistency-level is Session
// (ClientContext.applySessionToken), azcosmos v1.5.0 only when its caller gives one
// (ItemOptions.SessionToken). So a 404/1002 (a region behind the session) never answers
// cosmosctl; were one to, it stays a transient result tried in another region.
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
