package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
)

// A container's indexing policy, read and replaced whole: `container show
// --indexing-policy` prints it as JSON a replace takes, `container set-indexing-policy`
// applies one. The service changes a policy only by a replace of the whole container
// definition ("Replace a Collection", REST API: "supports changing the indexing
// policy"), so the command reads the container, swaps its policy and replaces it on the
// etag it read (If-Match): a change made meanwhile fails (412) instead of being lost.

// containerResource is a container's definition as the account sent it, and its etag.
type containerResource struct {
	body map[string]json.RawMessage
	etag string
}

func (r *resourceRun) getContainerResource(ctx context.Context, db, name string) (containerResource, error) {
	what := fmt.Sprintf("container %q in database %q", name, db)
	resp, err := r.send(ctx, engine.MetadataRequest{Method: http.MethodGet, Path: cosmos.ContainerPath(db, name), Database: db, Container: name}, what)
	if err != nil {
		return containerResource{}, err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return containerResource{}, fmt.Errorf("the account's answer for %s is not a container: %v", what, err)
	}
	etag := resp.ETag
	if etag == "" {
		_ = json.Unmarshal(body["_etag"], &etag)
	}
	return containerResource{body: body, etag: etag}, nil
}

// defaultIndexingPolicy is what a container without one has: everything indexed
// ("Indexing policies in Azure Cosmos DB": the default indexes every property).
var defaultIndexingPolicy = json.RawMessage(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`)

// indexingPolicy is the container's policy, the default one when it has none.
func (c containerResource) indexingPolicy() json.RawMessage {
	if p, ok := c.body["indexingPolicy"]; ok && len(bytes.TrimSpace(p)) > 0 && string(bytes.TrimSpace(p)) != "null" {
		return p
	}
	return defaultIndexingPolicy
}

// printIndexingPolicy prints the policy alone, indented: a file set-indexing-policy takes.
func (r *resourceRun) printIndexingPolicy(ctx context.Context, db, name string) error {
	c, err := r.getContainerResource(ctx, db, name)
	if err != nil {
		return err
	}
	return output.WriteJSON(r.io.Out, c.indexingPolicy())
}

func newContainerSetIndexingPolicyCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:   "set-indexing-policy FILE",
		Short: "Replace a container's indexing policy with the one in FILE (- for stdin)",
		Long: `Replace the indexing policy of a container (--container, or the profile's) with
the JSON object in FILE, or on standard input with -: a policy as
"container show --indexing-policy" prints it, or as "query --explain -o json"
proposes it (.indexing_policy.proposed).

The service changes a policy by a replace of the whole container: the command reads
the container, puts the new policy in its definition, keeps everything else, and
replaces it conditionally on the etag it read (If-Match). If the container changed
in between, the replace fails (exit 4) and nothing is applied: run it again.
The service then re-indexes in the background; queries use the new policy as the
index transformation progresses.

A FILE that is missing, not JSON or not a JSON object exits 2 before anything is
sent. A policy the service refuses is its 400 message (exit 2).
` + resourceHelp,
		Example: `  cosmosctl container show --indexing-policy > policy.json
  cosmosctl container set-indexing-policy policy.json
  cosmosctl query "SELECT * FROM c WHERE c.status = 'stuck'" --explain -o json --jq .indexing_policy.proposed | cosmosctl container set-indexing-policy -`,
		Args: exactArgs(1, "the policy file (- for standard input)"),
		RunE: func(c *cobra.Command, args []string) error {
			policy, err := readIndexingPolicy(args[0], io.In)
			if err != nil {
				return err
			}
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			db, name, err := r.target(nil)
			if err != nil {
				return err
			}
			d, err := r.setIndexingPolicy(c.Context(), db, name, policy)
			if err != nil {
				return err
			}
			out := d.info(db)
			return r.print(out, func() error { return output.WriteContainer(io.Out, io.outStyles(o.conn.noColor), out) })
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	return c
}

// readIndexingPolicy reads and checks a policy file: it must be one JSON object.
func readIndexingPolicy(path string, stdin io.Reader) (json.RawMessage, error) {
	var data []byte
	var err error
	name := path
	if path == "-" {
		name = "standard input"
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	switch {
	case err != nil && os.IsNotExist(err):
		return nil, usageErrorf("indexing policy file %s does not exist: give the path of a JSON file, or - to read the policy from standard input", path)
	case err != nil:
		return nil, usageErrorf("cannot read the indexing policy in %s: %v", name, err)
	}
	data = bytes.TrimSpace(bytes.TrimPrefix(data, utf8BOM))
	if len(data) == 0 {
		return nil, usageErrorf("the indexing policy in %s is empty: give a JSON object such as {\"includedPaths\":[{\"path\":\"/*\"}]}", name)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n")) + 1
			return nil, usageErrorf("the indexing policy in %s is not valid JSON (line %d): %v", name, line, err)
		}
		return nil, usageErrorf("the indexing policy in %s is not a JSON object: %v", name, err)
	}
	if _, wrapped := obj["indexingPolicy"]; wrapped {
		return nil, usageErrorf("%s holds a container definition, not an indexing policy: give the value of its indexingPolicy (container show --indexing-policy prints it)", name)
	}
	return data, nil
}

// setIndexingPolicy replaces the container with policy as its indexing policy, on the
// etag it read, and returns the container the account answered with.
func (r *resourceRun) setIndexingPolicy(ctx context.Context, db, name string, policy json.RawMessage) (containerDoc, error) {
	var d containerDoc
	cur, err := r.getContainerResource(ctx, db, name)
	if err != nil {
		return d, err
	}
	cur.body["indexingPolicy"] = policy
	body, _ := json.Marshal(cur.body)
	h := http.Header{}
	if cur.etag != "" {
		h.Set(cosmos.HeaderIfMatch, cur.etag)
	}
	what := fmt.Sprintf("container %q in database %q", name, db)
	resp, err := r.send(ctx, engine.MetadataRequest{Method: http.MethodPut, Path: cosmos.ContainerPath(db, name), Header: h, Body: body, Database: db, Container: name}, what)
	if status, _, ok := cosmos.Status(err); ok && status == http.StatusPreconditionFailed {
		return d, fmt.Errorf("%s changed while its indexing policy was being replaced (its etag is no longer %s); nothing was applied: run the command again: %w", what, cur.etag, err)
	}
	if status, _, ok := cosmos.Status(err); ok && status == http.StatusBadRequest {
		return d, &UsageError{Err: fmt.Errorf("the account refused the indexing policy: %w", err)}
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(resp.Body, &d); err != nil {
		return d, fmt.Errorf("the account's answer to the replace is not a container: %v", err)
	}
	return d, nil
}
