package rntbd

import "github.com/google/uuid"

// GUIDToWire lays id out as .NET's Guid.ToByteArray does, which is what the backend expects
// (Java RntbdTokenTypeTests.uuidConversion pins bytes generated that way): Data1 (the first
// 4 bytes of the text form) as a little-endian u32, Data2 and Data3 (the next 2 and 2) as
// little-endian u16s, and Data4 (the last 8) as they are. Only the first 8 bytes move.
func GUIDToWire(id uuid.UUID) [16]byte {
	var w [16]byte
	w[0], w[1], w[2], w[3] = id[3], id[2], id[1], id[0]
	w[4], w[5] = id[5], id[4]
	w[6], w[7] = id[7], id[6]
	copy(w[8:], id[8:])
	return w
}

// GUIDFromWire is the inverse of GUIDToWire. The swap is its own inverse, which is also
// why a codec that forgets it on both sides still passes its own round trips: only a
// vector from another implementation catches it.
func GUIDFromWire(w [16]byte) uuid.UUID {
	return uuid.UUID(GUIDToWire(uuid.UUID(w)))
}
