package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Shells cosmosctl generates completion scripts for, with the file name each script
// has under completions/ and in the release archives and packages.
var completionShells = []struct {
	name, file string
}{
	{"bash", "cosmosctl.bash"},
	{"zsh", "_cosmosctl"},
	{"fish", "cosmosctl.fish"},
	{"powershell", "cosmosctl.ps1"},
}

// CompletionFiles maps each shell to the file name of its completion script, for the
// generator that writes completions/.
func CompletionFiles() map[string]string {
	m := map[string]string{}
	for _, s := range completionShells {
		m[s.name] = s.file
	}
	return m
}

const completionLong = `Print a script that makes your shell complete cosmosctl's commands, flags and
values: profile names from the config file, the account's region names for
--region, --exclude and --preferred-regions, and the choices of -o,
--write-retries, --connection-mode, import --mode, --scenario and --effect.

Region names come from the account (GET /, with the same settings a command
would use) and are cached for 5 minutes in cosmosctl/completion in the user
cache directory; a completion never waits more than 2 s and never starts the
embedded emulator: with no account configured it offers the embedded
emulator's regions.

The deb and rpm packages install the scripts for bash, zsh and fish; the
release archives have them in completions/. See the help of each shell's
subcommand for how to install its script.`

func newCompletionCmd(io *IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:   "completion",
		Short: "Shell completion scripts for bash, zsh, fish and PowerShell",
		Long:  completionLong,
		Example: `  source <(cosmosctl completion bash)                     # bash, this shell
  cosmosctl completion zsh > "${fpath[1]}/_cosmosctl"      # zsh, every new shell
  cosmosctl completion fish | source                      # fish, this shell
  cosmosctl completion powershell | Out-String | Invoke-Expression`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown shell %q: use bash, zsh, fish or powershell", args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	for _, sh := range completionShells {
		c.AddCommand(newCompletionShellCmd(io, sh.name))
	}
	return c
}

var completionHelp = map[string]struct{ short, long, example string }{
	"bash": {
		short: "Print the bash completion script",
		long: `Print the bash completion script. It needs the bash-completion package (bash 4.1
or later): install it with your package manager if 'type _init_completion'
fails.

To load completions in this shell:
  source <(cosmosctl completion bash)

To load them in every new shell, once:
  Linux:  cosmosctl completion bash > ~/.local/share/bash-completion/completions/cosmosctl
          (or /etc/bash_completion.d/cosmosctl for every user)
  macOS:  cosmosctl completion bash > $(brew --prefix)/etc/bash_completion.d/cosmosctl

The deb and rpm packages install it in /usr/share/bash-completion/completions.`,
		example: `  source <(cosmosctl completion bash)
  cosmosctl completion bash > ~/.local/share/bash-completion/completions/cosmosctl`,
	},
	"zsh": {
		short: "Print the zsh completion script",
		long: `Print the zsh completion script.

If completion is not enabled in your zsh yet, enable it once:
  echo "autoload -U compinit; compinit" >> ~/.zshrc

To load completions in this shell:
  source <(cosmosctl completion zsh)

To load them in every new shell, once (then start a new shell):
  Linux:  cosmosctl completion zsh > "${fpath[1]}/_cosmosctl"
  macOS:  cosmosctl completion zsh > $(brew --prefix)/share/zsh/site-functions/_cosmosctl

The deb and rpm packages install it in /usr/share/zsh/vendor-completions.`,
		example: `  source <(cosmosctl completion zsh)
  cosmosctl completion zsh > "${fpath[1]}/_cosmosctl"`,
	},
	"fish": {
		short: "Print the fish completion script",
		long: `Print the fish completion script.

To load completions in this shell:
  cosmosctl completion fish | source

To load them in every new shell, once:
  cosmosctl completion fish > ~/.config/fish/completions/cosmosctl.fish

The deb and rpm packages install it in /usr/share/fish/vendor_completions.d.`,
		example: `  cosmosctl completion fish | source
  cosmosctl completion fish > ~/.config/fish/completions/cosmosctl.fish`,
	},
	"powershell": {
		short: "Print the PowerShell completion script",
		long: `Print the PowerShell completion script.

To load completions in this shell:
  cosmosctl completion powershell | Out-String | Invoke-Expression

To load them in every new shell, add that line to your PowerShell profile
($PROFILE), or save the script and dot-source it from the profile:
  cosmosctl completion powershell > cosmosctl.ps1

The release archives carry it as completions/cosmosctl.ps1.`,
		example: `  cosmosctl completion powershell | Out-String | Invoke-Expression
  cosmosctl completion powershell >> $PROFILE`,
	},
}

func newCompletionShellCmd(io *IOStreams, shell string) *cobra.Command {
	var noDesc bool
	h := completionHelp[shell]
	c := &cobra.Command{
		Use:                   shell,
		Short:                 h.short,
		Long:                  h.long,
		Example:               h.example,
		Args:                  noArgs,
		DisableFlagsInUseLine: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return writeCompletion(c.Root(), shell, io.Out, !noDesc)
		},
	}
	c.Flags().BoolVar(&noDesc, "no-descriptions", false, "complete without descriptions")
	return c
}

// writeCompletion writes cobra's completion script for shell. The scripts call
// `cosmosctl __complete …` for every completion, so they never need regenerating when
// commands or flags change; completions/ is regenerated anyway so that it matches.
func writeCompletion(root *cobra.Command, shell string, w io.Writer, desc bool) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, desc)
	case "zsh":
		if desc {
			return root.GenZshCompletion(w)
		}
		return root.GenZshCompletionNoDesc(w)
	case "fish":
		return root.GenFishCompletion(w, desc)
	case "powershell":
		if desc {
			return root.GenPowerShellCompletionWithDesc(w)
		}
		return root.GenPowerShellCompletion(w)
	}
	return fmt.Errorf("no completion for shell %q", shell)
}
