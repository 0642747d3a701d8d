package rntbd

import "fmt"

// TokenDef is what a token table knows about one id.
type TokenDef struct {
	Name     string
	Type     TokenType
	Required bool
}

// Table is a token vocabulary: one per frame kind, since request, response and the two
// context frames number their tokens independently (response 0x0000 is PayloadPresent,
// request 0x0000 is ResourceId). A decoder checks the tokens a table knows — type and
// presence — and keeps the rest untouched: the service adds ids faster than clients learn
// them (the .NET 201 vector carries 0x0063, which Java's list lacks).
type Table map[uint16]TokenDef

func (tab Table) label(id uint16) string {
	if d, ok := tab[id]; ok {
		return " (" + d.Name + ")"
	}
	return ""
}

// check fails on a known id with another type than the table's, since its value would be
// misread, and on a required id that is missing.
func (tab Table) check(tokens []Token) error {
	for _, t := range tokens {
		if d, ok := tab[t.ID]; ok && t.Type != d.Type {
			return fmt.Errorf("rntbd: token 0x%04X (%s) has type %s, want %s", t.ID, d.Name, t.Type, d.Type)
		}
	}
	// The lowest missing id is named, so the error does not depend on map order.
	missing, found := uint16(0), false
	for id, d := range tab {
		if !d.Required || (found && id > missing) {
			continue
		}
		if _, ok := Find(tokens, id); !ok {
			missing, found = id, true
		}
	}
	if found {
		return fmt.Errorf("rntbd: required token 0x%04X (%s) is missing", missing, tab[missing].Name)
	}
	return nil
}

// Request token ids: those the SDKs send for point operations (REFERENCE-rntbd §1.8), with
// types from Java RntbdConstants.RntbdRequestHeader and .NET RntbdConstants.RequestIdentifiers.
const (
	ReqResourceID            uint16 = 0x0000
	ReqAuthorizationToken    uint16 = 0x0001
	ReqPayloadPresent        uint16 = 0x0002
	ReqDate                  uint16 = 0x0003
	ReqPageSize              uint16 = 0x0004
	ReqSessionToken          uint16 = 0x0005
	ReqMatch                 uint16 = 0x0008
	ReqConsistencyLevel      uint16 = 0x0010
	ReqReplicaPath           uint16 = 0x0013
	ReqDatabaseName          uint16 = 0x0015
	ReqCollectionName        uint16 = 0x0016
	ReqDocumentName          uint16 = 0x0017
	ReqClientVersion         uint16 = 0x0028
	ReqPartitionKey          uint16 = 0x002B
	ReqPartitionKeyRangeID   uint16 = 0x002C
	ReqCollectionRid         uint16 = 0x0035
	ReqTransportRequestID    uint16 = 0x004D
	ReqEffectivePartitionKey uint16 = 0x005A
	ReqAllowTentativeWrites  uint16 = 0x0066
	ReqReturnPreference      uint16 = 0x0082

	// Ids Java's stored RntbdConstants (commit c3d24ee4877099c35edfe33386e4342ca286878f)
	// does not list; ids and types from .NET RntbdConstants.cs RequestIdentifiers on
	// azure-cosmos-dotnet-v3 msdata/direct, commit 1bc2c522055dbf350e17ca592fa89ec090e5a654.
	ReqSDKSupportedCapabilities  uint16 = 0x00A2
	ReqGlobalDatabaseAccountName uint16 = 0x00CE
	ReqStartEpkHash              uint16 = 0x00D2
	ReqEndEpkHash                uint16 = 0x00D3
)

// RequestTokens is the request vocabulary this package checks. PayloadPresent is the one
// token Java marks required.
var RequestTokens = Table{
	ReqResourceID:            {"ResourceId", TypeBytes, false},
	ReqAuthorizationToken:    {"AuthorizationToken", TypeString, false},
	ReqPayloadPresent:        {"PayloadPresent", TypeByte, true},
	ReqDate:                  {"Date", TypeSmallString, false},
	ReqPageSize:              {"PageSize", TypeULong, false},
	ReqSessionToken:          {"SessionToken", TypeString, false},
	ReqMatch:                 {"Match", TypeString, false},
	ReqConsistencyLevel:      {"ConsistencyLevel", TypeByte, false},
	ReqReplicaPath:           {"ReplicaPath", TypeString, false},
	ReqDatabaseName:          {"DatabaseName", TypeString, false},
	ReqCollectionName:        {"CollectionName", TypeString, false},
	ReqDocumentName:          {"DocumentName", TypeString, false},
	ReqClientVersion:         {"ClientVersion", TypeSmallString, false},
	ReqPartitionKey:          {"PartitionKey", TypeString, false},
	ReqPartitionKeyRangeID:   {"PartitionKeyRangeId", TypeString, false},
	ReqCollectionRid:         {"CollectionRid", TypeString, false},
	ReqTransportRequestID:    {"TransportRequestID", TypeULong, false},
	ReqEffectivePartitionKey: {"EffectivePartitionKey", TypeBytes, false},
	ReqAllowTentativeWrites:  {"AllowTentativeWrites", TypeByte, false},
	ReqReturnPreference:      {"ReturnPreference", TypeByte, false},

	ReqSDKSupportedCapabilities:  {"SDKSupportedCapabilities", TypeULong, false},
	ReqGlobalDatabaseAccountName: {"GlobalDatabaseAccountName", TypeString, false},
	ReqStartEpkHash:              {"StartEpkHash", TypeBytes, false},
	ReqEndEpkHash:                {"EndEpkHash", TypeBytes, false},
}

// Response token ids, from Java RntbdConstants.RntbdResponseHeader.
const (
	RespPayloadPresent                     uint16 = 0x0000
	RespLastStateChangeDateTime            uint16 = 0x0002
	RespContinuationToken                  uint16 = 0x0003
	RespETag                               uint16 = 0x0004
	RespRetryAfterMilliseconds             uint16 = 0x000C
	RespStorageMaxResoureQuota             uint16 = 0x000E
	RespStorageResourceQuotaUsage          uint16 = 0x000F
	RespSchemaVersion                      uint16 = 0x0010
	RespLSN                                uint16 = 0x0013
	RespItemCount                          uint16 = 0x0014
	RespRequestCharge                      uint16 = 0x0015
	RespOwnerFullName                      uint16 = 0x0017
	RespOwnerID                            uint16 = 0x0018
	RespQuorumAckedLSN                     uint16 = 0x001A
	RespSubStatus                          uint16 = 0x001C
	RespCurrentWriteQuorum                 uint16 = 0x001E
	RespCurrentReplicaSetSize              uint16 = 0x001F
	RespPartitionKeyRangeID                uint16 = 0x0021
	RespXPRole                             uint16 = 0x0026
	RespQueryMetrics                       uint16 = 0x0028
	RespGlobalCommittedLSN                 uint16 = 0x0029
	RespNumberOfReadRegions                uint16 = 0x0030
	RespItemLSN                            uint16 = 0x0032
	RespTransportRequestID                 uint16 = 0x0035
	RespDisableRntbdChannel                uint16 = 0x0038
	RespLocalLSN                           uint16 = 0x003A
	RespQuorumAckedLocalLSN                uint16 = 0x003B
	RespItemLocalLSN                       uint16 = 0x003C
	RespSessionToken                       uint16 = 0x003E
	RespIndexUtilization                   uint16 = 0x0044
	RespBackendRequestDurationMilliseconds uint16 = 0x0051

	// RespPhysicalPartitionID is not in Java's list; .NET RntbdConstants.cs
	// ResponseIdentifiers names it (msdata/direct, commit
	// 1bc2c522055dbf350e17ca592fa89ec090e5a654), and the .NET 201 vector carries it as a
	// String ("0").
	RespPhysicalPartitionID uint16 = 0x0063
)

// ResponseTokens is the response vocabulary this package checks; PayloadPresent is
// required (Java marks it so, and without it the body cannot be found).
var ResponseTokens = Table{
	RespPayloadPresent:                     {"PayloadPresent", TypeByte, true},
	RespLastStateChangeDateTime:            {"LastStateChangeDateTime", TypeSmallString, false},
	RespContinuationToken:                  {"ContinuationToken", TypeString, false},
	RespETag:                               {"ETag", TypeString, false},
	RespRetryAfterMilliseconds:             {"RetryAfterMilliseconds", TypeULong, false},
	RespStorageMaxResoureQuota:             {"StorageMaxResoureQuota", TypeString, false},
	RespStorageResourceQuotaUsage:          {"StorageResourceQuotaUsage", TypeString, false},
	RespSchemaVersion:                      {"SchemaVersion", TypeSmallString, false},
	RespLSN:                                {"LSN", TypeLongLong, false},
	RespItemCount:                          {"ItemCount", TypeULong, false},
	RespRequestCharge:                      {"RequestCharge", TypeDouble, false},
	RespOwnerFullName:                      {"OwnerFullName", TypeString, false},
	RespOwnerID:                            {"OwnerId", TypeString, false},
	RespQuorumAckedLSN:                     {"QuorumAckedLSN", TypeLongLong, false},
	RespSubStatus:                          {"SubStatus", TypeULong, false},
	RespCurrentWriteQuorum:                 {"CurrentWriteQuorum", TypeULong, false},
	RespCurrentReplicaSetSize:              {"CurrentReplicaSetSize", TypeULong, false},
	RespPartitionKeyRangeID:                {"PartitionKeyRangeId", TypeString, false},
	RespXPRole:                             {"XPRole", TypeULong, false},
	RespQueryMetrics:                       {"QueryMetrics", TypeString, false},
	RespGlobalCommittedLSN:                 {"GlobalCommittedLSN", TypeLongLong, false},
	RespNumberOfReadRegions:                {"NumberOfReadRegions", TypeULong, false},
	RespItemLSN:                            {"ItemLSN", TypeLongLong, false},
	RespTransportRequestID:                 {"TransportRequestID", TypeULong, false},
	RespDisableRntbdChannel:                {"DisableRntbdChannel", TypeByte, false},
	RespLocalLSN:                           {"LocalLSN", TypeLongLong, false},
	RespQuorumAckedLocalLSN:                {"QuorumAckedLocalLSN", TypeLongLong, false},
	RespItemLocalLSN:                       {"ItemLocalLSN", TypeLongLong, false},
	RespSessionToken:                       {"SessionToken", TypeString, false},
	RespIndexUtilization:                   {"IndexUtilization", TypeString, false},
	RespBackendRequestDurationMilliseconds: {"BackendRequestDurationMilliseconds", TypeDouble, false},
	RespPhysicalPartitionID:                {"PhysicalPartitionId", TypeString, false},
}

// Context (connection negotiation) token ids: Java RntbdContextRequestHeader /
// RntbdContextHeader, .NET ConnectionContextRequestTokenIdentifiers.
const (
	CtxReqProtocolVersion           uint16 = 0x0000
	CtxReqClientVersion             uint16 = 0x0001
	CtxReqUserAgent                 uint16 = 0x0002
	CtxReqCallerID                  uint16 = 0x0003
	CtxReqEnableChannelMultiplexing uint16 = 0x0004

	CtxRespProtocolVersion                 uint16 = 0x0000
	CtxRespClientVersion                   uint16 = 0x0001
	CtxRespServerAgent                     uint16 = 0x0002
	CtxRespServerVersion                   uint16 = 0x0003
	CtxRespIdleTimeoutInSeconds            uint16 = 0x0004
	CtxRespUnauthenticatedTimeoutInSeconds uint16 = 0x0005
)

// ContextRequestTokens: all three of version, client version and user agent are required
// (Java RntbdContextRequest).
var ContextRequestTokens = Table{
	CtxReqProtocolVersion:           {"ProtocolVersion", TypeULong, true},
	CtxReqClientVersion:             {"ClientVersion", TypeSmallString, true},
	CtxReqUserAgent:                 {"UserAgent", TypeSmallString, true},
	CtxReqCallerID:                  {"CallerId", TypeByte, false},
	CtxReqEnableChannelMultiplexing: {"EnableChannelMultiplexing", TypeByte, false},
}

// ContextResponseTokens: ServerAgent and ServerVersion are required on success (Java
// RntbdContextHeader); DecodeContextResponse does not require them on a failed negotiation,
// whose JSON error body is what the caller needs to see.
var ContextResponseTokens = Table{
	CtxRespProtocolVersion:                 {"ProtocolVersion", TypeULong, false},
	CtxRespClientVersion:                   {"ClientVersion", TypeSmallString, false},
	CtxRespServerAgent:                     {"ServerAgent", TypeSmallString, true},
	CtxRespServerVersion:                   {"ServerVersion", TypeSmallString, true},
	CtxRespIdleTimeoutInSeconds:            {"IdleTimeoutInSeconds", TypeULong, false},
	CtxRespUnauthenticatedTimeoutInSeconds: {"UnauthenticatedTimeoutInSeconds", TypeULong, false},
}
