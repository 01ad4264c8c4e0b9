package rowcall

import (
	"context"
	"time"
)

// OAuthClient is a client that registered itself (RFC 7591): public, with
// no secret, known by the redirect URIs it named.
type OAuthClient struct {
	ID           string   `json:"client_id"` // oc_…
	Name         string   `json:"client_name,omitempty"`
	LogoURI      string   `json:"logo_uri,omitempty"`
	RedirectURIs []string `json:"redirect_uris"`
	CreatedAt    string   `json:"created_at"`
	Remote       string   `json:"-"` // the address it registered from
}

// OAuthRequest is an authorization request waiting for the owner's consent.
// The client's name and logo are kept with it (a client ID metadata
// document is read once, when the request arrives).
type OAuthRequest struct {
	ID            string `json:"id"` // ocr_…, the consent's id
	ClientID      string `json:"client_id"`
	ClientName    string `json:"client_name"`
	LogoURI       string `json:"logo_uri,omitempty"`
	RedirectURI   string `json:"redirect_uri"`
	CodeChallenge string `json:"-"`
	State         string `json:"-"`
	Resource      string `json:"resource"`
	Scope         string `json:"scope,omitempty"`
	ExpiresAt     string `json:"expires_at"`
	Remote        string `json:"-"` // the address it came from
}

// OAuthBounds are the authorization server's bounds, each for everyone
// together and for one source: registrations in the last minute and
// registered clients never used, in all and from one address (Remote);
// authorization requests waiting for consent, in all, for one client and
// from one address.
type OAuthBounds struct {
	RegisterPerMinute, RegisterPerMinutePerAddress  int
	MaxUnused, MaxUnusedPerAddress                  int
	MaxPending, PendingPerClient, PendingPerAddress int
}

// OAuthCode is an authorization code, stored by its SHA-256: the token the
// consent minted, and what the token request must repeat.
type OAuthCode struct {
	TokenID, ClientID, RedirectURI, CodeChallenge, Resource, ExpiresAt string
}

// OAuthRefresh is a refresh token, stored by its SHA-256: the capability
// token its grant refreshes, the client it was issued to, and its
// generation in the grant (1 for the code's, its parent's + 1 after).
type OAuthRefresh struct {
	TokenID, ClientID string
	Gen               int
}

// OAuthGrants keeps OAuth clients, pending consents, codes and refresh
// tokens. Codes and refresh tokens are stored only as their SHA-256.
type OAuthGrants interface {
	// RegisterClient stores c unless that would pass b's registration
	// bounds (in the last minute, never used: in all, from c.Remote);
	// clients unused after a day are forgotten first. It reports whether c
	// was stored.
	RegisterClient(ctx context.Context, c *OAuthClient, b OAuthBounds) (bool, error)
	OAuthClient(ctx context.Context, id string) (OAuthClient, error)
	// CreateOAuthRequest stores q unless that would pass b's bounds of
	// requests waiting for consent (in all, for q.ClientID, from q.Remote);
	// it reports whether q was stored.
	CreateOAuthRequest(ctx context.Context, q *OAuthRequest, b OAuthBounds) (bool, error)
	OAuthRequest(ctx context.Context, id string) (OAuthRequest, error)
	// FinishOAuthRequest marks the request answered; only the first call
	// reports true.
	FinishOAuthRequest(ctx context.Context, id string) (bool, error)
	CreateOAuthCode(ctx context.Context, codeSHA256 string, c OAuthCode) error
	// UseOAuthCode marks the code used. first is false when it was used
	// before (the code is returned all the same, so its token can be revoked).
	UseOAuthCode(ctx context.Context, codeSHA256 string) (c OAuthCode, first bool, err error)
	CreateRefresh(ctx context.Context, refreshSHA256 string, r OAuthRefresh) error
	// UseRefresh marks the refresh token used. good is true for its first
	// use, and for a use by clientID within grace of its first while no
	// refresh token of a later generation of its grant was used (the one
	// just rotated, presented again by another window of the client); a
	// replay is not good (the token is returned all the same, so its grant
	// can be revoked). The check and the mark are one statement.
	UseRefresh(ctx context.Context, refreshSHA256, clientID string, grace time.Duration) (r OAuthRefresh, good bool, err error)
	// RefreshToken is the token and client of a refresh token, used or not.
	RefreshToken(ctx context.Context, refreshSHA256 string) (tokenID, clientID string, err error)
	// SetTokenSecret replaces a live token's secret (the access token a
	// grant issues), keeping the secret it replaces good for keepOld (none
	// when 0); it fails for a revoked token.
	SetTokenSecret(ctx context.Context, id, secretSHA256 string, keepOld time.Duration) error
}
