package rowcall

import (
	"context"
	"strings"
)

// Connection is a caller's link to an upstream account at a provider the
// operator configured: the access and refresh tokens the caller's consent
// obtained, stored sealed (never in this value). Holder is the credential that
// made it — a capability token's id (every token an OAuth grant issues shares
// its grant's id) or OwnerHolder — and it is used for that credential's calls
// only (docs/security.md#connections).
type Connection struct {
	Holder    string `json:"holder"`
	Provider  string `json:"provider"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"` // the last refresh
	ExpiresAt string `json:"expires_at,omitempty"`
}

// OwnerHolder is the holder of the owner's connections.
const OwnerHolder = "owner"

// SealedConnection is a Connection with its tokens encrypted: Sealed is
// AES-GCM ciphertext under the key named KeyID.
type SealedConnection struct {
	Connection
	KeyID  string
	Sealed []byte
}

// Connections keeps connections (sqlstore.Store).
type Connections interface {
	// PutConnection stores c, replacing holder's connection to the provider if any.
	PutConnection(ctx context.Context, c SealedConnection) error
	// ReplaceConnection stores c only if holder's connection to the provider
	// is still old (the same sealed bytes); it reports whether it did. A
	// refresh stores its tokens this way, so a connection deleted or replaced
	// while it waited on the provider stays as the other request left it.
	ReplaceConnection(ctx context.Context, old, c SealedConnection) (bool, error)
	// GetConnection returns holder's connection to provider (ENotFound when none).
	GetConnection(ctx context.Context, holder, provider string) (SealedConnection, error)
	// ListConnections lists holder's connections ("": everyone's), without their tokens.
	ListConnections(ctx context.Context, holder string) ([]Connection, error)
	// DeleteConnection forgets holder's connection to provider; it reports whether there was one.
	DeleteConnection(ctx context.Context, holder, provider string) (bool, error)
}

// Connector returns the access token of the calling credential's connection
// to provider, or the failure that stops the call
// (ERR:auth:connection_required:<provider> — with where to connect).
type Connector func(ctx context.Context, provider string) (token string, fail *Failure)

type connectorKey struct{}

// WithConnector is ctx carrying the calling credential's connections: the
// dispatcher sets it for each call, and runners read it (ConnectorOf) for a
// bearer:connection:NAME column.
func WithConnector(ctx context.Context, c Connector) context.Context {
	return context.WithValue(ctx, connectorKey{}, c)
}

// ConnectorOf is the connector ctx carries; without one, every connection
// is refused with ERR:auth:connections_off:<provider>.
func ConnectorOf(ctx context.Context) Connector {
	if c, ok := ctx.Value(connectorKey{}).(Connector); ok && c != nil {
		return c
	}
	return func(_ context.Context, provider string) (string, *Failure) {
		return "", Fail("auth", "connections_off", provider).
			Because("this host has no connection providers; the operator configures them in ROWCALL_CONNECTIONS and their sealing key in ROWCALL_CONNECTIONS_KEY (docs/tokens.md#connections)")
	}
}

// IsProviderName reports whether s can name a provider: 1 to 64 of a-z, 0-9, '_' and '-'.
func IsProviderName(s string) bool {
	return s != "" && len(s) <= 64 && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == ""
}

// SealedProvider is a connection provider the host registered itself, as a
// client of an MCP server's authorization server (dynamic client
// registration, RFC 7591), rather than one the operator listed in
// ROWCALL_CONNECTIONS: Server is the MCP server it signs in to, and Sealed
// its endpoints and client credentials, AES-GCM ciphertext under the key
// named KeyID, bound to Name (internal/connect).
type SealedProvider struct {
	Name      string
	Server    string
	KeyID     string
	Sealed    []byte
	CreatedAt string
}
