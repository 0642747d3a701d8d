// The module the harness (sdkcompat/gosuite) builds Microsoft's azcosmos emulator tests in:
// the azcosmos source from the module cache (the version the main go.mod requires), with
// this go.mod and go.sum instead of its own. The requirements are the main module's
// versions where it has them, so that only the suite's test-only dependencies (testify
// and its own) are downloaded beyond what `go mod download` at the root fetches:
//   (cd sdkcompat/gosuite/testdata/module && go mod download)
// Refresh after a change of azcosmos version: copy that version's go.mod here, bump the
// shared requirements to the main module's, and run `go mod tidy` in a copy of the module.

module github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos

go 1.26.0

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.23.3
	github.com/Azure/azure-sdk-for-go/sdk/azidentity v1.15.0
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.13.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/net v0.59.0
)

require (
	github.com/AzureAD/microsoft-authentication-library-for-go v1.10.1 // indirect
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/pkg/browser v0.0.0-20240102092130-5ac0b6a4141c // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)
