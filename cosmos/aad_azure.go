package cosmos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// AzureTokenSource adapts an azcore.TokenCredential (any azidentity credential) to a
// TokenSource for one scope. It keeps no token itself: AADCredential caches.
type AzureTokenSource struct {
	Credential azcore.TokenCredential
	Scope      string // see AADScope
}

// NewDefaultAzureTokenSource returns a source for the account at endpoint backed by
// azidentity's default credential chain: environment (AZURE_CLIENT_ID, AZURE_TENANT_ID,
// AZURE_CLIENT_SECRET or a certificate), workload identity, managed identity, then the
// Azure CLI, Azure Developer CLI and Azure PowerShell logins.
func NewDefaultAzureTokenSource(endpoint string) (*AzureTokenSource, error) {
	scope, err := AADScope(endpoint)
	if err != nil {
		return nil, err
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("cannot set up the Azure AD credential chain: %s", firstLine(err.Error()))
	}
	return &AzureTokenSource{Credential: cred, Scope: scope}, nil
}

// String names the source without anything secret.
func (s *AzureTokenSource) String() string { return "AzureTokenSource(" + s.Scope + ")" }

// ErrNoAzureCredential is returned (wrapped) when no credential of the chain could even
// try: nobody is logged in, there is no managed identity and no service principal in the
// environment.
var ErrNoAzureCredential = errors.New("no Azure AD credential found: run `az login`, use a managed identity, or set AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_CLIENT_SECRET; or use a key (--auth key)")

// Token implements TokenSource. azidentity's errors run to many lines (one per credential
// tried, and the token endpoint's whole response); they are reduced to one line here, as
// every cosmosctl error is. They never hold a token.
func (s *AzureTokenSource) Token(ctx context.Context) (string, time.Time, error) {
	tk, err := s.Credential.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{s.Scope}})
	if err == nil {
		return tk.Token, tk.ExpiresOn, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return "", time.Time{}, fmt.Errorf("getting an Azure AD token for %s: %w", s.Scope, ctxErr)
	}
	var failed *azidentity.AuthenticationFailedError
	if errors.As(err, &failed) {
		// A credential was there and Azure AD (or the CLI) refused it: say which and why.
		return "", time.Time{}, fmt.Errorf("Azure AD did not issue a token for %s: %s", s.Scope, attempt(err.Error()))
	}
	// Every credential of the chain was unavailable.
	return "", time.Time{}, fmt.Errorf("%w (scope %s)", ErrNoAzureCredential, s.Scope)
}

// attempt picks the informative part of an azidentity error. A chain's error lists the
// credentials it tried, one per tab-indented line, after a first line that only says it
// failed; the last one tried is the one that stopped it. A credential refused by a token
// endpoint follows its line with the HTTP exchange (more-indented lines): of that, the
// status and the endpoint's reason are kept.
func attempt(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	head, details := strings.TrimSpace(lines[0]), lines[1:]
	for i, l := range lines {
		if strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "\t\t") && strings.TrimSpace(l) != "" {
			head, details = strings.TrimSpace(l), nil
			for _, d := range lines[i+1:] {
				if !strings.HasPrefix(d, "\t\t") {
					break
				}
				details = append(details, d)
			}
		}
	}
	if why := refusal(details); why != "" {
		head += " (" + why + ")"
	}
	return truncate(head, 400)
}

// refusal reduces the HTTP exchange azidentity prints to "403 Forbidden: reason": the
// error_description of an Azure AD error body, else the body's first line.
func refusal(details []string) string {
	status, reason := "", ""
	for _, d := range details {
		d = strings.TrimSpace(d)
		switch {
		case strings.HasPrefix(d, "RESPONSE "):
			status = strings.TrimPrefix(d, "RESPONSE ")
			if _, text, ok := strings.Cut(status, ": "); ok {
				status = text
			}
		case status == "" || d == "" || strings.HasPrefix(d, "---") || strings.HasPrefix(d, "To troubleshoot") || d == "{" || d == "}":
		case strings.HasPrefix(d, `"error_description"`):
			_, v, _ := strings.Cut(d, ":")
			reason = strings.Trim(strings.TrimSpace(v), `",`)
		case reason == "":
			reason = d
		}
	}
	switch {
	case status == "":
		return ""
	case reason == "":
		return status
	}
	return status + ": " + reason
}
