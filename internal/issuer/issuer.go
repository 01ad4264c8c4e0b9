// Package issuer holds the one check of an authorization response's issuer
// (RFC 9207), which every OAuth client of rowcall makes before it redeems a
// code: a connection's (internal/connect) and a person's sign-in
// (internal/signin).
package issuer

import (
	"fmt"
	"net/url"
)

// Check refuses an authorization response (its callback's query) that names
// another issuer than want, or names none when the authorization server says
// it always does (required: its metadata's
// authorization_response_iss_parameter_supported), RFC 9207 §2.4: a code
// another authorization server issued is never sent to this one's token
// endpoint (a mix-up). The comparison is exact, as the RFC asks: no trailing
// slash or case is forgiven. An empty want (an issuer not known: a provider
// configured by its endpoints alone) is not checked. name is the provider's
// name, for the message.
func Check(want string, required bool, name string, callback url.Values) error {
	if want == "" {
		return nil
	}
	iss, named := callback.Get("iss"), callback.Has("iss")
	switch {
	case named && iss != want:
		return fmt.Errorf("the sign-in answer came from issuer %q, not %s's %q (RFC 9207): the code was not redeemed", iss, name, want)
	case !named && required:
		return fmt.Errorf("the sign-in answer names no issuer, though %s's authorization server %q always does (RFC 9207): the code was not redeemed", name, want)
	}
	return nil
}
