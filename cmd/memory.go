package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
)

// What a command remembers of an account between invocations, in the user's cache
// directory (statefile.Dir), one folder per account endpoint: a CLI process lives for
// one operation, and in a runbook loop the tenth `cosmosctl read` must not rediscover a
// dead region, nor the account topology, nor the first region's latency, from scratch.
const (
	topologyKind    = "account-topology"
	topologyVersion = 1
	adaptiveKind    = "adaptive-hedging"
	// topologyFresh is how long a saved topology is used without asking the service
	// (the .NET SDK refreshes its account every 5 minutes); topologyKnown how long it
	// still names the regional endpoints the account lookup falls back to.
	topologyFresh = 5 * time.Minute
	topologyKnown = 7 * 24 * time.Hour
)

type savedTopology struct {
	Account   *cosmos.Account `json:"account"`
	FetchedAt time.Time       `json:"fetched_at"`
}

// memory is one command's view of what is remembered of its account. With persistence
// off (the embedded emulator, whose ports change every run; --no-health-memory) it still
// holds the health store that the command's own operations share.
type memory struct {
	persist  bool
	endpoint string
	health   *health.Store
	notices  io.Writer

	topologyPath, healthPath, adaptivePath string
	known                                  *cosmos.Account
	knownFresh                             bool
	knownAt                                time.Time

	// hadHealth: the health file held entries when the command started.
	hadHealth bool

	mu       sync.Mutex
	fetched  *cosmos.Account
	adaptive []*hedging.Adaptive
	loaded   hedging.AdaptiveState
}

// openMemory loads what earlier commands remembered of endpoint. Problems with the files
// (corrupt, foreign, locked) are one notice each on stderr and never fail the command.
func openMemory(notices io.Writer, endpoint string, persist, topology bool) *memory {
	hs, _ := health.New(health.Config{}, clock.Real{})
	m := &memory{persist: persist, endpoint: endpoint, health: hs, notices: notices}
	dir, err := statefile.Dir()
	if err != nil {
		if persist || topology {
			fmt.Fprintf(notices, "cosmosctl: not remembering anything between commands: %v\n", err)
		}
		m.persist = false
		return m
	}
	m.topologyPath = statefile.AccountFile(dir, endpoint, topologyFile)
	m.healthPath = statefile.AccountFile(dir, endpoint, healthFile)
	m.adaptivePath = statefile.AccountFile(dir, endpoint, adaptiveFile)
	if topology {
		if t, err := statefile.Load[savedTopology](m.topologyPath, topologyKind, topologyVersion, endpoint); err != nil {
			m.notice(err)
		} else if t.Account != nil && len(t.Account.ReadableLocations) > 0 && len(t.Account.WritableLocations) > 0 {
			age := time.Since(t.FetchedAt)
			if age >= 0 && age < topologyKnown {
				m.known, m.knownFresh, m.knownAt = t.Account, age < topologyFresh, t.FetchedAt
			}
		}
	} else {
		m.topologyPath = ""
	}
	if m.persist {
		st, err := statefile.Load[health.State](m.healthPath, health.StateKind, health.StateVersion, endpoint)
		if err != nil {
			m.notice(err)
		} else {
			hs.Merge(st)
			m.hadHealth = len(st.Entries) > 0
		}
		if m.loaded, err = statefile.Load[hedging.AdaptiveState](m.adaptivePath, adaptiveKind, hedging.AdaptiveStateVersion, endpoint); err != nil {
			m.notice(err)
		}
	}
	return m
}

func (m *memory) notice(err error) {
	if err != nil {
		fmt.Fprintf(m.notices, "cosmosctl: %v\n", err)
	}
}

// accountFetched is the engine's OnAccount: the topology is saved when the command ends.
func (m *memory) accountFetched(a *cosmos.Account) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fetched = a
}

// learnInto gives an adaptive strategy what earlier commands learned, and has what it
// learns saved when the command ends.
func (m *memory) learnInto(a *hedging.Adaptive) {
	if a == nil || !m.persist {
		return
	}
	a.Import(m.loaded)
	m.mu.Lock()
	m.adaptive = append(m.adaptive, a)
	m.mu.Unlock()
}

// save writes back what this command learned, merged under each file's lock with what
// other commands saved meanwhile.
func (m *memory) save() {
	m.mu.Lock()
	fetched, adaptive := m.fetched, append([]*hedging.Adaptive(nil), m.adaptive...)
	m.mu.Unlock()
	if fetched != nil && m.topologyPath != "" {
		m.notice(statefile.Update(m.topologyPath, topologyKind, topologyVersion, m.endpoint, func(savedTopology, bool) (savedTopology, error) {
			return savedTopology{Account: fetched, FetchedAt: time.Now().UTC()}, nil
		}))
	}
	if !m.persist {
		return
	}
	mine := m.health.Snapshot()
	if len(mine.Entries) == 0 && !m.hadHealth {
		m.saveAdaptive(adaptive) // no health learned, and none to forget
		return
	}
	m.notice(statefile.Update(m.healthPath, health.StateKind, health.StateVersion, m.endpoint, func(cur health.State, _ bool) (health.State, error) {
		merged, err := health.New(m.health.Config(), clock.Real{})
		if err != nil {
			return cur, err
		}
		merged.Merge(cur)
		merged.Merge(mine)
		return merged.Snapshot(), nil
	}))
	m.saveAdaptive(adaptive)
}

func (m *memory) saveAdaptive(adaptive []*hedging.Adaptive) {
	for _, a := range adaptive {
		learned := a.Export()
		m.notice(statefile.Update(m.adaptivePath, adaptiveKind, hedging.AdaptiveStateVersion, m.endpoint, func(cur hedging.AdaptiveState, _ bool) (hedging.AdaptiveState, error) {
			return hedging.MergeAdaptiveState(cur, learned, time.Now(), a.Config()), nil
		}))
	}
}
