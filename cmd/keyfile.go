package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// readKeyFile reads an account key from a file, so that it never appears in process
// arguments or shell history. The file must be a small regular file (see
// config.ReadSecretFile); when other users can read it, a one-line warning goes to warn,
// as ssh gives for a private key (nil: no warning, as during shell completion).
func readKeyFile(path string, warn io.Writer) (string, error) {
	data, fi, err := config.ReadSecretFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", usageErrorf("key file %s does not exist: check the --key-file path", path)
		}
		return "", usageErrorf("cannot read key file %s: %v", path, err)
	}
	if w := config.SecretFileWarning(path, fi); w != "" && warn != nil {
		fmt.Fprintln(warn, "warning: "+w)
	}
	key := strings.TrimSpace(string(data))
	if _, err := cosmos.NewMasterKey(key); err != nil {
		return "", usageErrorf("key file %s: %v", path, err)
	}
	return key, nil
}
