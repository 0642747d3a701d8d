// Package jsondoc is the document model of the local Cosmos DB emulator.
//
// Cosmos DB returns documents with their properties in the order they were
// written, and clients notice when an emulator reorders them or rounds large
// integers, so documents are held as an ordered tree ([Value]) whose numbers
// keep their original text instead of being decoded into map[string]any.
//
// On top of that tree the package implements the two places where the
// emulator has to understand document contents: Cosmos DB partial document
// updates ([ParsePatchBody], [ApplyPatch]) and the small subset of the Cosmos
// SQL dialect that the emulator supports for queries and patch conditions
// ([ParseQuery], [ParseCondition]). Anything outside that subset is rejected
// with an error wrapping [ErrUnsupported] rather than being answered wrongly.
package jsondoc
