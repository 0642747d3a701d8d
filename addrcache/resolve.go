package addrcache

import (
	"context"
	"fmt"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// flight is one foreground resolve and the callers waiting for it.
type flight struct {
	done    chan struct{}
	err     error
	waiters int
	cancel  context.CancelFunc
}

// resolvedLocked returns the key's entry once it has replicas, resolving it if needed.
// It is called and returns with c.mu held, releasing it while waiting.
//
// The resolve runs on its own goroutine, not on the first caller's: if it ran under the
// first caller's context, that caller giving up would fail every other caller sharing
// the flight. It is cancelled only when every waiter has given up (or on Close); the
// waiters' own deadlines bound it, so RefreshTimeout does not apply.
func (c *Cache) resolvedLocked(ctx context.Context, key Key) (*entry, error) {
	e := c.entries[key]
	if e == nil {
		e = &entry{}
		c.entries[key] = e
	}
	for e.replicas == nil {
		if c.closed {
			return nil, ErrClosed
		}
		f := e.resolving
		if f == nil {
			f = c.startResolveLocked(ctx, key, e)
		}
		f.waiters++
		c.mu.Unlock()
		select {
		case <-f.done:
			c.mu.Lock()
			f.waiters--
			if f.err != nil {
				return nil, f.err
			}
		case <-ctx.Done():
			c.mu.Lock()
			f.waiters--
			if f.waiters == 0 && e.resolving == f {
				// Nobody wants the answer any more; a later caller starts afresh
				// rather than joining a cancelled flight.
				e.resolving = nil
				f.cancel()
			}
			return nil, context.Cause(ctx)
		}
	}
	return e, nil
}

func (c *Cache) startResolveLocked(ctx context.Context, key Key, e *entry) *flight {
	// Keep the caller's values (the engine's diagnostics), not its cancellation.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	unlink := context.AfterFunc(c.life, cancel)
	f := &flight{done: make(chan struct{}), cancel: cancel}
	e.resolving = f
	c.inflight++
	go func() {
		addrs, err := c.resolver.Resolve(rctx, key, false)
		unlink()
		cancel()
		c.mu.Lock()
		defer c.mu.Unlock()
		if err == nil {
			var rs []*replica
			if rs, err = merge(nil, addrs, c.clk.Now()); err == nil && e.replicas == nil {
				e.replicas = rs
			}
		}
		if err != nil {
			if c.closed {
				err = ErrClosed
			} else {
				err = fmt.Errorf("resolving replica addresses of %v: %w", key, err)
			}
		}
		f.err = err
		if e.resolving == f {
			e.resolving = nil
		}
		close(f.done)
		c.doneLocked()
	}()
	return f
}

// refreshIfStaleLocked starts a background refresh when an Unhealthy mark has outlived
// UnhealthyFor, as the SDKs do (shouldRefreshHealthStatus): the refresh that Gone started
// must have failed, and the gateway is asked again. It is paced at one attempt per
// UnhealthyFor so that a gateway that keeps failing is not asked on every request.
func (c *Cache) refreshIfStaleLocked(key Key, e *entry, now time.Time) {
	if e.refreshing || now.Sub(e.lastRefresh) < c.opts.UnhealthyFor {
		return
	}
	for _, r := range e.replicas {
		if r.health == Unhealthy && now.Sub(r.since) >= c.opts.UnhealthyFor {
			c.startRefreshLocked(key, e, now)
			return
		}
	}
}

// startRefreshLocked starts the key's background refresh unless one is running: the
// single flight that turns a burst of 410s from one moved replica into one gateway call.
// Requests meanwhile keep the stale set, whose other replicas are still good.
func (c *Cache) startRefreshLocked(key Key, e *entry, now time.Time) bool {
	if c.closed || e.refreshing {
		return false
	}
	e.refreshing = true
	e.lastRefresh = now
	c.refreshes++
	c.inflight++
	ctx, cancel := context.WithCancelCause(c.life)
	// The bound is armed on the injected clock, like every other timeout of the engine.
	timeout := c.opts.RefreshTimeout
	timer := c.clk.AfterFunc(timeout, func() {
		cancel(fmt.Errorf("addrcache: refresh of %v timed out after %v", key, timeout))
	})
	go func() {
		addrs, err := c.resolver.Resolve(ctx, key, true)
		timer.Stop()
		cancel(nil)
		c.mu.Lock()
		defer c.mu.Unlock()
		e.refreshing = false
		if err == nil {
			if rs, err := merge(e.replicas, addrs, c.clk.Now()); err == nil {
				e.replicas = rs
			}
		}
		// A failed refresh leaves the marks in place: they lapse after UnhealthyFor,
		// and the next Gone may try again.
		c.doneLocked()
	}()
	return true
}

// merge builds the replica set from the gateway's answer. Addresses returned again keep
// their health, except that Unhealthy becomes UnhealthyPending (Java's setRefreshed):
// the gateway still lists the replica, so it is tried again, but after the replicas known
// to answer. Addresses not returned are dropped; new ones start Unknown.
func merge(old []*replica, addrs []cosmos.Address, now time.Time) ([]*replica, error) {
	byURL := make(map[string]*replica, len(old))
	for _, r := range old {
		byURL[r.url] = r
	}
	out := make([]*replica, 0, len(addrs))
	seen := make(map[string]bool, len(addrs))
	for _, a := range addrs {
		if a.PhysicalURI == "" || seen[a.PhysicalURI] {
			continue
		}
		seen[a.PhysicalURI] = true
		r := byURL[a.PhysicalURI]
		if r == nil {
			r = &replica{url: a.PhysicalURI, health: Unknown, since: now}
		} else if r.health == Unhealthy {
			r.health, r.since = UnhealthyPending, now
		}
		r.primary = a.IsPrimary
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, ErrNoAddresses
	}
	return out, nil
}

func (c *Cache) doneLocked() {
	c.inflight--
	if c.inflight == 0 {
		c.idle.Broadcast()
	}
}
