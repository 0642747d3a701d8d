package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/output"
)

// keyScope is what --pk selects for a command that reads many items (query, changes,
// export): one partition key, which the service is sent as the partition key header, or
// a prefix of a hierarchical key ('["acme"]' of /tenant,/user), which is read as the
// effective partition key range its keys span, range by range, each request narrowed to
// the part of the span its range holds: what the JS SDK does with a prefix (a feed range
// over cosmos.PrefixRange), since a prefix is no partition key to send in the header.
// Both are nil without --pk.
type keyScope struct {
	key, prefix cosmos.PartitionKey
}

// resolveKeyScope tells a whole key from a prefix by the container's partition key
// definition (read once per client, and cached). A key longer than the container's
// paths is bad input.
func resolveKeyScope(ctx context.Context, sess *session, flag string, pk cosmos.PartitionKey) (keyScope, error) {
	if pk == nil {
		return keyScope{}, nil
	}
	def, err := sess.client.PartitionKeyDefinition(ctx, sess.settings.Database, sess.settings.Container)
	if err != nil {
		return keyScope{}, asUsage(err)
	}
	if err := checkKeyLength(flag, pk, def); err != nil {
		return keyScope{}, err
	}
	if def.IsPrefix(pk) {
		return keyScope{prefix: pk}, nil
	}
	return keyScope{key: pk}, nil
}

// checkKeyLength refuses a --pk with more values than the container has paths.
func checkKeyLength(flag string, pk cosmos.PartitionKey, def cosmos.PartitionKeyDefinition) error {
	if !def.TooLong(pk) {
		return nil
	}
	fix := "give one value per path"
	if len(def.Paths) > 1 {
		fix += ", or fewer for a prefix of the hierarchical key"
	}
	return usageErrorf("--pk %s has %d values but the container's partition key has %s (%s): %s",
		flag, len(pk), output.HumanCount(len(def.Paths), "path"), strings.Join(def.Paths, ", "), fix)
}

// json is the key or prefix as the JSON array the user gave, for state files and -o json.
func (s keyScope) json() string {
	switch {
	case s.prefix != nil:
		return s.prefix.JSON()
	case s.key != nil:
		return s.key.JSON()
	}
	return ""
}

// describe says what the scope reads, for --diagnostics.
func (s keyScope) describe() string {
	if s.prefix != nil {
		r := cosmos.PrefixRange(s.prefix)
		return fmt.Sprintf("within partition key prefix %s (effective partition keys %s … %s)", s.prefix.JSON(), r.Min, r.Max)
	}
	return "within partition key " + s.key.JSON()
}
