package emulator

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// SplitRequest is the body of POST /_emulator/splits: split one live partition key
// range of a container (Range may be left out when the container has one), at the
// effective partition key At ("": the median of its documents' keys, splits.go).
type SplitRequest struct {
	Database  string `json:"database"`
	Container string `json:"container"`
	Range     string `json:"range"`
	At        string `json:"at,omitempty"`
}

// MergeRequest is the body of POST /_emulator/merges: merge two adjacent live
// partition key ranges of a container into one.
type MergeRequest struct {
	Database  string   `json:"database"`
	Container string   `json:"container"`
	Ranges    []string `json:"ranges"`
}

// SplitRule is a scenario's split: the first time a range of the container (Range
// only, when given) holds Documents documents or more, it splits at the median of its
// documents' keys. Each rule splits once.
type SplitRule struct {
	Database  string `toml:"database" json:"database"`
	Container string `toml:"container" json:"container"`
	Range     string `toml:"range,omitempty" json:"range,omitempty"`
	Documents int    `toml:"documents" json:"documents"`
}

// MergeRule is a scenario's merge: After the emulator's start (on its clock), two
// adjacent ranges of the container merge. The container must exist by then; a merge
// whose container does not exist yet waits for it.
type MergeRule struct {
	Database  string          `toml:"database" json:"database"`
	Container string          `toml:"container" json:"container"`
	Ranges    []string        `toml:"ranges" json:"ranges"`
	After     faults.Duration `toml:"after,omitzero" json:"after,omitempty"`
}

// reshapes holds a scenario's splits and merges that have not happened yet.
type reshapes struct {
	mu     sync.Mutex
	splits []SplitRule
	merges []MergeRule
	// pending is true while any rule is left, so that requests skip the lock once
	// every rule has fired.
	pending bool
}

func (s *Server) checkReshapeRules(cfg *Config) error {
	for _, r := range cfg.Splits {
		if r.Database == "" || r.Container == "" || r.Documents < 1 {
			return fmt.Errorf("split rule %+v: database, container and documents (at least 1) are required", r)
		}
	}
	for _, r := range cfg.Merges {
		if r.Database == "" || r.Container == "" || len(r.Ranges) != 2 || r.After < 0 {
			return fmt.Errorf("merge rule %+v: database, container and two ranges are required, and after must not be negative", r)
		}
	}
	if (len(cfg.Splits) > 0 || len(cfg.Merges) > 0) && cfg.DataDir != "" {
		return errPersistentReshape
	}
	s.reshape.splits = append([]SplitRule(nil), cfg.Splits...)
	s.reshape.merges = append([]MergeRule(nil), cfg.Merges...)
	s.reshape.pending = len(cfg.Splits)+len(cfg.Merges) > 0
	return nil
}

// SplitRange splits a live partition key range of a running emulator's container.
func (s *Server) SplitRange(in SplitRequest) (RangeChange, error) {
	c, cerr := s.store.container(in.Database, in.Container)
	if cerr != nil {
		return RangeChange{}, cerr
	}
	if in.Range == "" {
		parts := c.partitions()
		if len(parts) > 1 {
			return RangeChange{}, fmt.Errorf("name the range to split (ranges of %s: %s)", in.Container, rangeIDs(parts))
		}
		in.Range = parts[0].rng.ID
	}
	return s.store.splitRange(c, in.Range, in.At)
}

// MergeRanges merges two adjacent live partition key ranges of a running emulator's
// container.
func (s *Server) MergeRanges(in MergeRequest) (RangeChange, error) {
	c, cerr := s.store.container(in.Database, in.Container)
	if cerr != nil {
		return RangeChange{}, cerr
	}
	if len(in.Ranges) != 2 {
		return RangeChange{}, fmt.Errorf("a merge takes two adjacent ranges, not %d (ranges of %s in order: %s)", len(in.Ranges), in.Container, rangeIDs(c.partitions()))
	}
	return s.store.mergeRanges(c, in.Ranges[0], in.Ranges[1])
}

// applyDueReshapes carries out the scenario's merges whose time has come and its
// splits whose range has filled. It runs before every data request and after every
// write, so that a split is done before the write that filled the range is answered.
func (s *Server) applyDueReshapes() {
	r := &s.reshape
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.pending {
		return
	}
	now := s.clock.Now()
	merges := r.merges[:0]
	for _, m := range r.merges {
		c, err := s.store.container(m.Database, m.Container)
		if err != nil || now.Before(s.started.Add(time.Duration(m.After))) {
			merges = append(merges, m)
			continue
		}
		if _, err := s.store.mergeRanges(c, m.Ranges[0], m.Ranges[1]); err != nil {
			s.logger.Printf("scenario merge of ranges %s of %s/%s failed: %v", strings.Join(m.Ranges, ", "), m.Database, m.Container, err)
		}
	}
	r.merges = merges
	splits := r.splits[:0]
	for _, sp := range r.splits {
		c, err := s.store.container(sp.Database, sp.Container)
		if err != nil {
			splits = append(splits, sp)
			continue
		}
		full := ""
		for _, p := range c.partitions() {
			if (sp.Range == "" || p.rng.ID == sp.Range) && p.documents(c, now) >= sp.Documents {
				full = p.rng.ID
				break
			}
		}
		if full == "" {
			splits = append(splits, sp)
			continue
		}
		if _, err := s.store.splitRange(c, full, ""); err != nil {
			s.logger.Printf("scenario split of range %s of %s/%s failed: %v", full, sp.Database, sp.Container, err)
		}
	}
	r.splits = splits
	r.pending = len(r.splits)+len(r.merges) > 0
}

// documents counts the live documents of p.
func (p *partition) documents(c *container, now time.Time) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	n := 0
	for _, e := range p.items {
		if v := e.latest(); v != nil && v.body != nil && c.live(v, now) {
			n++
		}
	}
	return n
}

// The merge capability. An account with partition merge enabled refuses requests from
// SDKs that cannot handle merges; an SDK says it can with the header
// x-ms-cosmos-sdk-supportedcapabilities, a decimal bit set whose bit 0 is
// PartitionMerge (azcosmos sdk_capabilities.go sends "1" on every request, the account
// read included, cosmos_client.go addDefaultHeaders; the .NET SDK's
// SDKSupportedCapabilities, azure-cosmos-dotnet-v3 PR 3111, "We still plan to block sdks
// that do not have support when partition merge feature will be turned on in the
// service"; the JS SDK before merge support: "if the feature is enabled, all requests
// from Node SDK will be blocked", azure-sdk-for-js PR 31867). The refusal is a 400
// BadRequest, as reported against the Go SDK before it sent the header
// (azure-sdk-for-go issue 20709); its message and substatus were not in the report,
// so the emulator's message is its own and the substatus 0.
const (
	headerSDKSupportedCapabilities = "x-ms-cosmos-sdk-supportedcapabilities"
	capabilityPartitionMerge       = 1 << 0
)

// mergeCapable answers a request of a merge-enabled account that does not say it can
// handle merges with the service's 400; true when the request may go on.
func (s *Server) mergeCapable(req *request) bool {
	if !s.cfg.MergeEnabled {
		return true
	}
	v := strings.TrimSpace(req.r.Header.Get(headerSDKSupportedCapabilities))
	if n, err := strconv.ParseUint(v, 10, 64); err == nil && n&capabilityPartitionMerge != 0 {
		return true
	}
	s.writeError(req, cosmosErr(http.StatusBadRequest, 0, fmt.Sprintf(
		"partition merge is enabled on this account, and the request does not declare the capability to handle merges (%s: %q, which lacks the PartitionMerge bit, value %d): use an SDK version with merge support",
		headerSDKSupportedCapabilities, v, capabilityPartitionMerge)), 0)
	return false
}
