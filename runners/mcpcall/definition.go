package mcpcall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
)

// The content lines an imported row records its tool's definition in
// (internal/mcpimport writes them): the approved definition's Fingerprint,
// and the changed one the owner rejected.
const (
	UpstreamLine = "# UPSTREAM: "
	RejectedLine = "# REJECTED: "
)

// Fingerprint is "sha256:<hex>" over the tool's definition as the server
// listed it: name, title, description, input schema and annotations, and
// its output schema when it has one (a tool without one keeps the
// fingerprint it had before rows took output schemas).
func Fingerprint(t *sdk.Tool) string {
	def := []any{t.Name, t.Title, t.Description, t.InputSchema, t.Annotations}
	if t.OutputSchema != nil {
		def = append(def, t.OutputSchema)
	}
	b, _ := json.Marshal(def)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// approved refuses the call of a row whose owner rejected a changed
// definition of its tool (a RejectedLine) unless the server lists the
// approved one (the UpstreamLine) again: the tools are listed first, on the
// row's own session and credential.
func (r *Runner) approved(ctx context.Context, row *rowcall.Row, t Target, env rowcall.Env) *rowcall.Failure {
	tools, _, err := r.ListTools(ctx, t.Server(), row.Auth, env)
	if err != nil {
		return rowcall.Fail("mcp", "fetch", "listing the tools to check "+row.Key+"'s approved definition: "+err.Error())
	}
	now := "none"
	for _, tool := range tools {
		if tool.Name == t.Tool {
			now = Fingerprint(tool)
		}
	}
	if want := row.DocLine("UPSTREAM"); now != want {
		return rowcall.Fail("mcp", "definition_rejected", now).Because("the server's definition of " + t.Tool + " is not the one the owner approved (" + want +
			"), and the owner rejected the changed one, so the call was not sent; the server must list the approved definition again, or the owner accepts the change (rowcall mcp sync --accept " + row.Key + ")")
	}
	return nil
}
