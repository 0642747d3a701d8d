//go:build !unix

package config

// openNonBlocking is 0 where opening a file cannot block on a missing writer.
const openNonBlocking = 0
