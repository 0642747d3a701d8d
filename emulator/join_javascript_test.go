package emulator_test

import (
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// TestOfficialJavaScriptSDKJoins runs sdkcompat/js/join.test.js: JOIN rows, ORDER BY,
// aggregates, GROUP BY and DISTINCT over a JOIN, EXISTS, ARRAY(SELECT …) and SELECT
// without FROM across four ranges through the SDK's query-plan pipeline, in pages of
// 1, 3 and the default, compared with the same queries computed in JavaScript.
func TestOfficialJavaScriptSDKJoins(t *testing.T) {
	runJavaScriptSuite(t, emulator.Config{Ranges: 4}, "join.test.js")
}
