package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/export"
	"github.com/cosmosctl/cosmosctl/output"
)

const exportMergeLong = `Combine the outputs of an export's shards (export --shard i/N, or --feed-range)
into one NDJSON file, after checking that they are the whole export: every
shard's manifest (written beside its --output-file as FILE` + export.ManifestSuffix + `,
or at --manifest PATH) is given, or a directory that holds them; they are shards
of the same export (account, container, source, query, stripped properties,
--jq) and the same plan (the same N, each index once); their intervals of
effective partition keys tile ["", "FF") with no gap and no overlap; each is
complete; each output file still holds the bytes its manifest counts. The
files are copied in EPK order to stdout or to --output-file FILE (written to a
temporary file and renamed, so FILE is there whole or not at all).

Exit status:
  0   merged
  2   manifests that can never merge: unreadable, of different exports or plans,
      the same shard twice, overlapping intervals (a split between the shards'
      starts gave them different plans: run the export again)
  11  some shards are missing or not complete: stderr names them; run (or resume
      with the same command and --state) those shards, then merge again
  1   an output file that is gone, changed since it completed, or cannot be read
` + "Exit codes: cosmosctl help exit-codes."

type exportMergeOptions struct {
	outputFile string
}

func newExportMergeCmd(io *IOStreams) *cobra.Command {
	o := &exportMergeOptions{}
	c := &cobra.Command{
		Use:   "merge MANIFEST... | DIR",
		Short: "Check that every shard of an export completed, and combine their outputs into one",
		Long:  exportMergeLong,
		Example: `  cosmosctl export merge out/ > items.ndjson
  cosmosctl export merge out/shard-*.ndjson.manifest.json --output-file items.ndjson`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("export merge needs the shards' manifests (FILE%s), or the directory that holds them", export.ManifestSuffix)
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return o.run(c.Context(), io, args)
		},
	}
	c.Flags().StringVar(&o.outputFile, "output-file", "", "write the combined NDJSON to this file instead of stdout")
	return c
}

func (o *exportMergeOptions) run(_ context.Context, io *IOStreams, args []string) error {
	paths, err := export.ManifestPaths(args)
	if err != nil {
		return usageErrorf("export merge: %v", err)
	}
	var ms []*export.Manifest
	for _, p := range paths {
		m, err := export.LoadManifest(p)
		if err != nil {
			return usageErrorf("export merge: %v", err)
		}
		ms = append(ms, m)
	}
	sorted, err := export.CheckShards(ms)
	var ie *export.IncompleteError
	switch {
	case errors.As(err, &ie):
		return err
	case err != nil:
		return usageErrorf("export merge: %v", err)
	}
	if o.outputFile == "" {
		items, _, err := export.MergeOutputs(io.Out, sorted)
		if err == nil && io.ErrTTY {
			fmt.Fprintf(io.ErrOut, "cosmosctl: merged %d shards, %s\n", len(sorted), output.HumanCount(int(items), "item"))
		}
		return err
	}
	for _, m := range sorted {
		if samePath(m.Output, o.outputFile) {
			return usageErrorf("--output-file %s is the output of %s: give the merged file a name of its own", o.outputFile, m.Shard)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.outputFile), ".cosmosctl-merge-*")
	if err != nil {
		return usageErrorf("--output-file %s: %v", o.outputFile, unwrapPath(err))
	}
	defer os.Remove(tmp.Name())
	items, n, err := export.MergeOutputs(tmp, sorted)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), o.outputFile)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(io.ErrOut, "cosmosctl: merged %d shards, %s (%s), into %s\n", len(sorted), output.HumanCount(int(items), "item"), humanBytes(n), o.outputFile)
	return nil
}
