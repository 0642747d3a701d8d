package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newExitCodesHelpTopic() *cobra.Command {
	var b strings.Builder
	b.WriteString("cosmosctl exits with one of these codes, so that scripts can tell what happened\nand whether a retry could help:\n\n")
	for _, e := range exitCodeHelp {
		fmt.Fprintf(&b, "  %d  %s\n", e.code, e.text)
	}
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "Exit codes and what they mean",
		Long:  b.String(),
	}
}
