package cosmos

import "encoding/json"

// Account is the body of GET / on an account (global or regional) endpoint.
type Account struct {
	ID                             string            `json:"id"`
	RID                            string            `json:"_rid"`
	Self                           string            `json:"_self"`
	ETag                           string            `json:"_etag,omitempty"`
	Media                          string            `json:"media"`
	Addresses                      string            `json:"addresses"`
	Dbs                            string            `json:"_dbs"`
	WritableLocations              []Location        `json:"writableLocations"`
	ReadableLocations              []Location        `json:"readableLocations"`
	EnableMultipleWriteLocations   bool              `json:"enableMultipleWriteLocations"`
	ContinuousBackupEnabled        bool              `json:"continuousBackupEnabled"`
	EnableNRegionSynchronousCommit bool              `json:"enableNRegionSynchronousCommit"`
	UserReplicationPolicy          ReplicationPolicy `json:"userReplicationPolicy"`
	UserConsistencyPolicy          ConsistencyPolicy `json:"userConsistencyPolicy"`
	SystemReplicationPolicy        ReplicationPolicy `json:"systemReplicationPolicy"`
	ReadPolicy                     ReadPolicy        `json:"readPolicy"`
	QueryEngineConfiguration       string            `json:"queryEngineConfiguration"`
	// ThinClientWritableLocations and ThinClientReadableLocations are the regional
	// Gateway 2.0 ("thin client") proxies, listed only in answer to an account read
	// that carries x-ms-cosmos-use-thinclient (.NET GatewayAccountReader and
	// GlobalEndpointManager.ParseThinClientLocationsFromAdditionalProperties).
	ThinClientWritableLocations []Location `json:"thinClientWritableLocations,omitempty"`
	ThinClientReadableLocations []Location `json:"thinClientReadableLocations,omitempty"`
}

// Location is one region of an account and its regional endpoint.
type Location struct {
	Name     string `json:"name"`
	Endpoint string `json:"databaseAccountEndpoint"`
}

// ReplicationPolicy is the replica-count section of the account.
type ReplicationPolicy struct {
	AsyncReplication  bool `json:"asyncReplication"`
	MinReplicaSetSize int  `json:"minReplicaSetSize"`
	MaxReplicasetSize int  `json:"maxReplicasetSize"`
}

// ConsistencyPolicy is the account's default consistency. The service reports the
// bounds of BoundedStaleness (K versions, T seconds) whatever the level, 100 and 5 on
// an account that never set them (the GET / example of Microsoft's "Developing with
// multi-region DocumentDB accounts", azure-docs; the .NET SDK's ConsistencyPolicy reads
// maxStalenessPrefix and maxIntervalInSeconds).
type ConsistencyPolicy struct {
	DefaultConsistencyLevel string `json:"defaultConsistencyLevel"`
	MaxStalenessPrefix      int64  `json:"maxStalenessPrefix,omitempty"`
	MaxIntervalInSeconds    int    `json:"maxIntervalInSeconds,omitempty"`
}

// ReadPolicy tells clients how many replicas they may read from.
type ReadPolicy struct {
	PrimaryReadCoefficient   int `json:"primaryReadCoefficient"`
	SecondaryReadCoefficient int `json:"secondaryReadCoefficient"`
}

// WriteRegions and ReadRegions return the region names in the account's order.
func (a *Account) WriteRegions() []string { return locationNames(a.WritableLocations) }
func (a *Account) ReadRegions() []string  { return locationNames(a.ReadableLocations) }

func locationNames(ls []Location) []string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name
	}
	return names
}

// Database is a database resource.
type Database struct {
	ID    string `json:"id"`
	RID   string `json:"_rid,omitempty"`
	Self  string `json:"_self,omitempty"`
	ETag  string `json:"_etag,omitempty"`
	TS    int64  `json:"_ts,omitempty"`
	Colls string `json:"_colls,omitempty"`
	Users string `json:"_users,omitempty"`
}

// Container is a collection resource. Only the fields cosmosctl uses are typed; the
// indexing policy and the rest pass through as raw JSON.
type Container struct {
	ID             string                 `json:"id"`
	RID            string                 `json:"_rid,omitempty"`
	Self           string                 `json:"_self,omitempty"`
	ETag           string                 `json:"_etag,omitempty"`
	TS             int64                  `json:"_ts,omitempty"`
	PartitionKey   PartitionKeyDefinition `json:"partitionKey"`
	IndexingPolicy json.RawMessage        `json:"indexingPolicy,omitempty"`
	DefaultTTL     *int                   `json:"defaultTtl,omitempty"`
	// The policies below are kept as the service returns them, raw.
	UniqueKeyPolicy       json.RawMessage `json:"uniqueKeyPolicy,omitempty"`
	VectorEmbeddingPolicy json.RawMessage `json:"vectorEmbeddingPolicy,omitempty"`
	FullTextPolicy        json.RawMessage `json:"fullTextPolicy,omitempty"`
	// ConflictResolutionPolicy and GeospatialConfig the service fills in when a
	// container is created without them.
	ConflictResolutionPolicy json.RawMessage `json:"conflictResolutionPolicy,omitempty"`
	GeospatialConfig         json.RawMessage `json:"geospatialConfig,omitempty"`
	AnalyticalStorageTTL     *int            `json:"analyticalStorageTtl,omitempty"`
	ChangeFeedPolicy         json.RawMessage `json:"changeFeedPolicy,omitempty"`
	ComputedProperties       json.RawMessage `json:"computedProperties,omitempty"`
	ClientEncryptionPolicy   json.RawMessage `json:"clientEncryptionPolicy,omitempty"`
	// TTLPropertyPath is the deprecated ttlPropertyPath of the .NET SDK.
	TTLPropertyPath string `json:"ttlPropertyPath,omitempty"`
	Docs            string `json:"_docs,omitempty"`
	Sprocs          string `json:"_sprocs,omitempty"`
	Triggers        string `json:"_triggers,omitempty"`
	Udfs            string `json:"_udfs,omitempty"`
	Conflicts       string `json:"_conflicts,omitempty"`
}

// PartitionKeyDefinition says where a container's documents keep their partition key.
type PartitionKeyDefinition struct {
	Paths   []string `json:"paths"`
	Kind    string   `json:"kind"`
	Version int      `json:"version,omitempty"`
}

// Partition key kinds.
const (
	PartitionKindHash      = "Hash"
	PartitionKindMultiHash = "MultiHash"
)

// PartitionKeyRange is one physical partition's slice of the effective-partition-key space.
type PartitionKeyRange struct {
	ID                 string   `json:"id"`
	RID                string   `json:"_rid,omitempty"`
	Self               string   `json:"_self,omitempty"`
	ETag               string   `json:"_etag,omitempty"`
	TS                 int64    `json:"_ts,omitempty"`
	MinInclusive       string   `json:"minInclusive"`
	MaxExclusive       string   `json:"maxExclusive"`
	RidPrefix          int      `json:"ridPrefix"`
	ThroughputFraction float64  `json:"throughputFraction"`
	Status             string   `json:"status"`
	Parents            []string `json:"parents"`
}

// PartitionKeyRangeFeed is the body of GET …/pkranges.
type PartitionKeyRangeFeed struct {
	RID    string              `json:"_rid"`
	Ranges []PartitionKeyRange `json:"PartitionKeyRanges"`
	Count  int                 `json:"_count"`
}

// DatabaseFeed and ContainerFeed are list bodies.
type DatabaseFeed struct {
	RID       string     `json:"_rid"`
	Databases []Database `json:"Databases"`
	Count     int        `json:"_count"`
}

type ContainerFeed struct {
	RID        string      `json:"_rid"`
	Containers []Container `json:"DocumentCollections"`
	Count      int         `json:"_count"`
}

// DocumentFeed is the body of a query or read-feed page.
type DocumentFeed struct {
	RID       string            `json:"_rid"`
	Documents []json.RawMessage `json:"Documents"`
	Count     int               `json:"_count"`
}

// QuerySpec is the body of a query POST.
type QuerySpec struct {
	Query      string           `json:"query"`
	Parameters []QueryParameter `json:"parameters,omitempty"`
}

// QueryParameter is one named parameter (@name) of a query.
type QueryParameter struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// Address is one replica address from the gateway's //addresses/ endpoint. The field
// names keep the service's misspellings ("physcialUri") because that is the wire format.
type Address struct {
	IsPrimary           bool   `json:"isPrimary"`
	Protocol            string `json:"protocol"`
	PhysicalURI         string `json:"physcialUri"`
	PartitionKeyRangeID string `json:"partitionKeyRangeId"`
	PartitionIndex      string `json:"partitionIndex,omitempty"`
}

// AddressFeed is the body of GET //addresses/ ("Addresss", sic).
type AddressFeed struct {
	Addresses []Address `json:"Addresss"`
}
