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

// checkDirectConsistency refuses direct mode for an operation that would go to a
// replica of a Strong or Bounded Staleness account. Reading one replica, as cosmosctl's
// direct mode does, is what the SDKs do for Session (with the session token),
// Consistent Prefix and Eventual only; Strong and Bounded Staleness need the quorum
// read (two replicas agreeing on the LSN) and the barrier writes of .NET's
// QuorumReader, StoreReader and ConsistencyWriter (msdata/direct), which cosmosctl does
// not implement. Refusing is the documented choice: the gateway does that work.
// Queries, change feed reads and partition deletes go through the gateway in direct
// mode too, so they are not refused.
func checkDirectConsistency(op *Operation, acct *cosmos.Account) error {
	if op.Kind.viaGateway() {
		return nil
	}
	switch level := acct.UserConsistencyPolicy.DefaultConsistencyLevel; level {
	case cosmos.ConsistencyStrong, cosmos.ConsistencyBoundedStaleness:
		return inputErrorf("direct mode does not serve a %s account (it would need the quorum reads and barrier writes cosmosctl does not implement): use gateway mode, --connection-mode gateway", level)
	}
	return nil
}
