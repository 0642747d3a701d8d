package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// ControlClient drives a running emulator's control API.
type ControlClient struct {
	Endpoint  string
	Transport *cosmos.Transport
}

// NewControlClient signs control requests with key.
func NewControlClient(endpoint, key string) (*ControlClient, error) {
	cred, err := cosmos.NewMasterKey(key)
	if err != nil {
		return nil, err
	}
	return &ControlClient{Endpoint: endpoint, Transport: &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred, UserAgent: "cosmosctl-emulator-control"}}, nil
}

func (c *ControlClient) call(ctx context.Context, method, path string, in, out any) error {
	req := &cosmos.Request{Method: method, Path: "/" + cosmos.TypeEmulator + path, Header: http.Header{}}
	if in != nil {
		body, err := json.Marshal(in)
		if err != nil {
			return err
		}
		req.Body = body
	}
	resp, err := c.Transport.Do(ctx, c.Endpoint, req)
	if err != nil {
		return err
	}
	if out != nil && len(resp.Body) > 0 {
		return json.Unmarshal(resp.Body, out)
	}
	return nil
}

// State returns the emulator's configuration and fault state.
func (c *ControlClient) State(ctx context.Context) (State, error) {
	var st State
	err := c.call(ctx, http.MethodGet, "/state", nil, &st)
	return st, err
}

// AddFault adds a rule and returns it with its id.
func (c *ControlClient) AddFault(ctx context.Context, r faults.Rule) (faults.Rule, error) {
	var out faults.Rule
	err := c.call(ctx, http.MethodPost, "/faults", r, &out)
	return out, err
}

// Faults lists the rules.
func (c *ControlClient) Faults(ctx context.Context) ([]faults.Rule, error) {
	var out []faults.Rule
	err := c.call(ctx, http.MethodGet, "/faults", nil, &out)
	return out, err
}

// RemoveFault removes one rule.
func (c *ControlClient) RemoveFault(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, "/faults/"+url.PathEscape(id), nil, nil)
}

// ClearFaults removes every rule.
func (c *ControlClient) ClearFaults(ctx context.Context) error {
	return c.call(ctx, http.MethodDelete, "/faults", nil, nil)
}

// Latency lists the latency table, in the order its entries were first set.
func (c *ControlClient) Latency(ctx context.Context) ([]faults.LatencyEntry, error) {
	var out []faults.LatencyEntry
	err := c.call(ctx, http.MethodGet, "/latency", nil, &out)
	return out, err
}

// SetLatency sets one latency entry.
func (c *ControlClient) SetLatency(ctx context.Context, spec faults.LatencySpec) ([]faults.LatencyEntry, error) {
	var out []faults.LatencyEntry
	err := c.call(ctx, http.MethodPut, "/latency", spec, &out)
	return out, err
}

// Failover makes region the write region and returns the new account topology.
func (c *ControlClient) Failover(ctx context.Context, region string) (cosmos.Account, error) {
	var out cosmos.Account
	err := c.call(ctx, http.MethodPost, "/failover", FailoverRequest{Region: region}, &out)
	return out, err
}

// SetReplicationLag changes the replication lag.
func (c *ControlClient) SetReplicationLag(ctx context.Context, lag faults.Duration) (State, error) {
	var out State
	err := c.call(ctx, http.MethodPut, "/replication", ReplicationRequest{Lag: lag}, &out)
	return out, err
}

// SetEnforceThroughput turns throttling by provisioned throughput on or off.
func (c *ControlClient) SetEnforceThroughput(ctx context.Context, on bool) (State, error) {
	var out State
	err := c.call(ctx, http.MethodPut, "/throughput", ThroughputRequest{Enforce: on}, &out)
	return out, err
}

// Replicas lists every replica set with each replica's address, state and request count.
func (c *ControlClient) Replicas(ctx context.Context) ([]ReplicaSetInfo, error) {
	var out []ReplicaSetInfo
	err := c.call(ctx, http.MethodGet, "/replicas", nil, &out)
	return out, err
}

// MoveReplica moves a replica; m.After counts from now.
func (c *ControlClient) MoveReplica(ctx context.Context, m ReplicaMove) (ReplicaMoveStatus, error) {
	var out ReplicaMoveStatus
	err := c.call(ctx, http.MethodPost, "/replica-moves", m, &out)
	return out, err
}

// ReplicaMoves lists the replica moves made so far.
func (c *ControlClient) ReplicaMoves(ctx context.Context) ([]ReplicaMoveStatus, error) {
	var out []ReplicaMoveStatus
	err := c.call(ctx, http.MethodGet, "/replica-moves", nil, &out)
	return out, err
}

// Split splits a partition key range of a container, moving its documents.
func (c *ControlClient) Split(ctx context.Context, in SplitRequest) (RangeChange, error) {
	var out RangeChange
	err := c.call(ctx, http.MethodPost, "/splits", in, &out)
	return out, err
}

// Merge merges two adjacent partition key ranges of a container.
func (c *ControlClient) Merge(ctx context.Context, in MergeRequest) (RangeChange, error) {
	var out RangeChange
	err := c.call(ctx, http.MethodPost, "/merges", in, &out)
	return out, err
}
