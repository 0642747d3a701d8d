package cmd

import "github.com/cosmosctl/cosmosctl/internal/testkit"

// The helpers cmd's tests share with the end-to-end tests in e2e/, under the names these
// tests have always used.
var (
	testAccount     = testkit.Account
	isolate         = testkit.Isolate
	cosmosctlBinary = testkit.Binary
	runBinary       = testkit.RunBinary
	queryAccount    = testkit.QueryAccount
	makeQueryItems  = testkit.QueryItems
	where           = testkit.Where
	jsonLines       = testkit.JSONLines
)

const (
	testAccountKey = testkit.AccountKey
	queryTestItems = testkit.QueryTestItems
)

type (
	syncBuffer = testkit.Buffer
	qitem      = testkit.QueryItem
)
