package cosmos

// Request and response header names of the gateway protocol. Go's http.Header
// canonicalises names, so these are used with Header.Get/Set, never as map keys.
const (
	HeaderAuthorization        = "Authorization"
	HeaderDate                 = "x-ms-date"
	HeaderVersion              = "x-ms-version"
	HeaderPartitionKey         = "x-ms-documentdb-partitionkey"
	HeaderIsUpsert             = "x-ms-documentdb-is-upsert"
	HeaderIsQuery              = "x-ms-documentdb-isquery"
	HeaderQuery                = "x-ms-documentdb-query"
	HeaderEnableCrossPartition = "x-ms-documentdb-query-enablecrosspartition"
	HeaderQueryPlanRequest     = "x-ms-cosmos-is-query-plan-request"
	// HeaderSupportedQueryFeatures lists, on a query plan request, the query features the
	// client's pipeline can run; HeaderQueryVersion is the plan format it reads.
	HeaderSupportedQueryFeatures = "x-ms-cosmos-supported-query-features"
	HeaderQueryVersion           = "x-ms-cosmos-query-version"
	HeaderIfMatch                = "If-Match"
	HeaderIfNoneMatch            = "If-None-Match"
	HeaderPrefer                 = "Prefer"
	HeaderConsistencyLevel       = "x-ms-consistency-level"
	HeaderSessionToken           = "x-ms-session-token"
	HeaderActivityID             = "x-ms-activity-id"
	HeaderAllowTentativeWrites   = "x-ms-cosmos-allow-tentative-writes"
	HeaderForceRefresh           = "x-ms-force-refresh"
	// HeaderUseThinClient asks an account read to list the Gateway 2.0 proxies
	// (.NET ThinClientConstants.EnableThinClientEndpointDiscoveryHeaderName).
	HeaderUseThinClient      = "x-ms-cosmos-use-thinclient"
	HeaderMaxItemCount       = "x-ms-max-item-count"
	HeaderContinuation       = "x-ms-continuation"
	HeaderAIM                = "A-IM"
	HeaderRequestCharge      = "x-ms-request-charge"
	HeaderSubStatus          = "x-ms-substatus"
	HeaderRetryAfterMs       = "x-ms-retry-after-ms"
	HeaderItemCount          = "x-ms-item-count"
	HeaderContentPath        = "x-ms-content-path"
	HeaderAltContentPath     = "x-ms-alt-content-path"
	HeaderETag               = "etag"
	HeaderLSN                = "lsn"
	HeaderItemLSN            = "x-ms-item-lsn"
	HeaderGlobalCommittedLSN = "x-ms-global-committed-lsn"
	// HeaderLocalLSN and HeaderItemLocalLSN are the LSNs of the answering region's own
	// log (on a single-region account the same as lsn and x-ms-item-lsn), and
	// HeaderPhysicalPartitionID the physical partition that answered.
	HeaderLocalLSN            = "x-ms-cosmos-llsn"
	HeaderItemLocalLSN        = "x-ms-cosmos-item-llsn"
	HeaderPhysicalPartitionID = "x-ms-cosmos-physical-partition-id"
	// HeaderRequestDuration is the service's own time for the request, in decimal
	// milliseconds: the round trip minus it is the network and the client.
	HeaderRequestDuration = "x-ms-request-duration-ms"
	// HeaderPopulateQueryMetrics asks a query page for HeaderQueryMetrics, the service's
	// "key=value;…" execution figures; HeaderPopulateIndexMetrics asks it for
	// HeaderIndexUtilization, base64 JSON of the indexes used and those that would help.
	HeaderPopulateQueryMetrics = "x-ms-documentdb-populatequerymetrics"
	HeaderQueryMetrics         = "x-ms-documentdb-query-metrics"
	HeaderPopulateIndexMetrics = "x-ms-cosmos-populateindexmetrics"
	HeaderIndexUtilization     = "x-ms-cosmos-index-utilization"
	HeaderServedRegion         = "x-ms-cosmos-emulator-region" // emulator only: which region answered
	HeaderPartitionKeyRangeID  = "x-ms-documentdb-partitionkeyrangeid"
	// HeaderStartEPK and HeaderEndEPK narrow a request addressed to one partition key
	// range to the effective partition keys [start, end) of it; HeaderReadKeyType says
	// HeaderSDKSupportedCapabilities declares what the client can handle (SupportedCapabilities).
	HeaderSDKSupportedCapabilities = "x-ms-cosmos-sdk-supportedcapabilities"
	// so (ReadKeyTypeEPKRange).
	HeaderStartEPK      = "x-ms-start-epk"
	HeaderEndEPK        = "x-ms-end-epk"
	HeaderReadKeyType   = "x-ms-read-key-type"
	HeaderResourceQuota = "x-ms-resource-quota"
	HeaderResourceUsage = "x-ms-resource-usage"
	// HeaderPopulatePartitionStatistics asks a container read for its ranges' statistics.
	HeaderPopulatePartitionStatistics = "x-ms-documentdb-populatepartitionstatistics"
)

// SupportedCapabilities is the x-ms-cosmos-sdk-supportedcapabilities cosmosctl sends: a
// decimal bit set whose bit 0 is PartitionMerge, the value azcosmos (sdk_capabilities.go)
// and @azure/cosmos (SDKSupportedCapabilities.PartitionMerge) send on every request.
const SupportedCapabilities = "1"

// ReadKeyTypeEPKRange is the x-ms-read-key-type of a request narrowed by HeaderStartEPK
// and HeaderEndEPK.
const ReadKeyTypeEPKRange = "EffectivePartitionKeyRange"

// APIVersion is the x-ms-version cosmosctl sends; the emulator accepts any version the
// official SDKs send.
const APIVersion = "2020-11-05"

// PreferMinimal asks the service to answer writes without echoing the document.
const PreferMinimal = "return=minimal"

// HeaderPopulateQueryAdvice asks a query page for HeaderQueryAdvice, the service's Query
// Advisor rules the query matches: URL-encoded JSON [{"Id": "QA1002", "Params": […]}]
// (.NET SDK Query/Core/QueryAdvisor/QueryAdvice.cs TryCreateFromString; the Java SDK's
// QueryAdvice). Each rule is documented at QueryAdvisorURL + its Id.
const (
	HeaderPopulateQueryAdvice = "x-ms-cosmos-populatequeryadvice"
	HeaderQueryAdvice         = "x-ms-cosmos-query-advice"
	QueryAdvisorURL           = "https://aka.ms/CosmosDB/QueryAdvisor/"
)
