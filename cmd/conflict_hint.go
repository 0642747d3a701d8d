package cmd

import (
	"errors"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The service answers two different 409s to a write: the id is taken in the partition
// key ("Entity with the specified id already exists in the system."), or the item would
// share the values of one of the container's unique keys with another item of its
// partition key ("Unique index constraint violation.", the service's message as
// MicrosoftDocs/azure-docs-sdk-dotnet issue 612 shows it). The second names neither the
// key nor the remedy, and a person reading "409 Conflict" after a create assumes the
// first: the hint says which it is.

// uniqueIndexMessage is the service's message for a unique key violation.
const uniqueIndexMessage = "Unique index constraint violation"

// withUniqueKeyHint adds the hint to err when it is a unique key violation.
func withUniqueKeyHint(err error) error {
	var e *cosmos.Error
	if !errors.As(err, &e) || e.StatusCode != 409 || !strings.Contains(e.Message, uniqueIndexMessage) {
		return err
	}
	return &hintedError{err: err, hint: "another item with the same partition key already has this item's values for one of the container's unique keys (its uniqueKeyPolicy); the id is not what conflicts: change those values, or free them by changing or deleting the other item"}
}
