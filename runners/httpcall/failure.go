package httpcall

import (
	"errors"
	"net/url"
)

// fetchMessage is the message for a transport failure. net/http wraps every
// failure in a *url.Error that names the request URL, which may carry a
// query credential; the URL is dropped and only the cause kept. A refusal by
// the host's outbound policy (an error with Refused() true) is reported in
// its own words.
func fetchMessage(err error) string {
	var refused interface{ Refused() bool }
	if errors.As(err, &refused) && refused.Refused() {
		return refused.(error).Error()
	}
	return errorsUnwrapURL(err)
}

// errorsUnwrapURL is err's message without the *url.Error wrapping.
func errorsUnwrapURL(err error) string {
	var ue *url.Error
	for errors.As(err, &ue) {
		err = ue.Err
	}
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
