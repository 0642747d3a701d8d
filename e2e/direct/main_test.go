package direct_test

import (
	"testing"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
