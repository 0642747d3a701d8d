//go:build unix

package config

import "syscall"

// openNonBlocking makes opening a FIFO return at once instead of waiting for a writer.
const openNonBlocking = syscall.O_NONBLOCK
