package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/export"
)

// exportKeys are the keys that decide what export writes: what serve
// would publish for that base URL, and where it goes.
var exportKeys = slices.Concat(validateKeys, []string{"base_url", "page_size", "server_name", "server_description", "server_logo", "catalog_publisher", "provenance", "catalogue_view_max_bytes"}, config.ExportNames)

func newExportCmd(c *cli) *cobra.Command {
	return configCommand(c, &cobra.Command{
		Use:   "export",
		Short: "Write every static surface as files, for a static host or a bucket",
		Long: "Export scans the tree as serve would and writes what serve publishes for\n" +
			"--base-url as files into --out, a folder or a bucket URL (s3://, gs://,\n" +
			"azblob://, file://): the RFC index, the per-skill scoped indexes, the legacy\n" +
			"index, the native manifest tree, the agent card, the API catalog, the OpenAPI\n" +
			"description, every artifact at its content-addressed path and, unless\n" +
			"--catalogue=false, the HTML catalogue as static pages. Only what\n" +
			"changed is written; nothing an earlier export advertised changes bytes, and\n" +
			"what no document names any more stays until --prune-older-than. The dynamic\n" +
			"routes (search, read API, update check, health) are not exported and not\n" +
			"linked unless --api-url names a live server for them. docs/operations.md\n" +
			"shows how to host the result.",
	}, exportKeys, func(cmd *cobra.Command, cfg *config.Config, _ []string) error {
		return exportTree(cmd.Context(), cfg, cmd.ErrOrStderr())
	})
}

// exportTree scans the tree once and writes its export.
func exportTree(ctx context.Context, cfg *config.Config, stderr io.Writer) error {
	switch {
	case cfg.BaseURL == "":
		return fmt.Errorf("%w: --base-url is required: the URL the export will be served at (its absolute URLs start with it)", config.ErrUsage)
	case cfg.ExportOut == "":
		return fmt.Errorf("%w: --out is required: a folder or a bucket URL (s3://, gs://, azblob://, file://)", config.ErrUsage)
	}
	src, err := source(cfg)
	if err != nil {
		return err
	}
	start := time.Now()
	snap, err := catalog.Build(ctx, src, 1)
	if err != nil {
		return err
	}
	if n := snap.ErrorCount(); n > 0 {
		// As serve does: a bad file is left out (or its last good version
		// kept), the rest is published. validate names each problem.
		fmt.Fprintf(stderr, "warning: %d errors in the tree; those items are left out (run validate for the list)\n", n)
	}
	opts := export.Options{BaseURL: cfg.BaseURL, APIURL: cfg.ExportAPI, PruneOlderThan: cfg.ExportPrune,
		Catalogue: cfg.ExportPages, ViewMaxBytes: int64(cfg.CatalogueView)}
	files, err := export.Files(snap.Feed(), snap.Store, opts)
	if err != nil {
		return err
	}
	t, err := export.Open(ctx, cfg.ExportOut)
	if err != nil {
		return err
	}
	res, err := export.Export(ctx, t, files, opts)
	err = errors.Join(err, t.Close())
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if err != nil && res.Failed == 0 {
		return err
	}
	failed := ""
	if res.Failed > 0 {
		failed = fmt.Sprintf(", %d not written", res.Failed)
	}
	// Files that could not be written are each the problem of their own
	// file: the rest is exported, and the command fails after.
	fmt.Fprintf(stderr, "exported %d skills and %d sub-agents to %s: %d files (%d bytes), %d written (%d for metadata only), %d unchanged, %d kept unnamed, %d pruned%s, in %s\n",
		len(snap.Skills), len(snap.Agents), cfg.ExportOut, res.Files, res.Bytes, res.Written, res.Metadata, res.Unchanged, res.Kept, res.Pruned, failed, time.Since(start).Round(time.Millisecond))
	return err
}
