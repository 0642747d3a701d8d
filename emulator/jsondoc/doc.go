// Package jsondoc is the document model of the local Cosmos DB emulator.
//
// Cosmos DB returns documents with their properties in the order they were
// written, and clients notice when an emulator reorders them or rounds large
// integers, so documents are held as an ordered tree ([Value]) whose numbers
// keep their original text instead of being decoded into map[string]any.
//
// On top of that tree the package implements the two places where the
// emulator has to understand document contents: Cosmos DB partial document
// updates ([ParsePatchBody], [ApplyPatch]) and the Cosmos SQL dialect, for
// queries and patch conditions ([ParseQuery], [ParseCondition]): parsing,
// evaluation over a scope's documents with the service's undefined semantics
// and order across types ([Query.Bind], [Program.Select],
// [Program.Materialize]), and query plans with the gateway's rewritten
// per-range queries ([Program.Plan]). SQL outside what is implemented (JOIN,
// subqueries, user-defined functions, …) is rejected with an error
// wrapping [ErrUnsupported] rather than being answered wrongly.
//
// The package knows nothing of partitions, paging or HTTP; the emulator
// decides which documents a query sees and how its rows are paged.
package jsondoc
