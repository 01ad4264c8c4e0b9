package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/runners/httpcall"
)

// complete sends the conversation so far and returns the model's answer, or
// the failure that ends the call. A 429 or 5xx answer is retried up to
// r.retries times with jittered exponential backoff, honouring Retry-After
// (and retry-after-ms) up to r.retryMax.
func (c *conversation) complete(ctx context.Context) (answer, *rowcall.Failure) {
	body, err := json.Marshal(c.req)
	if err != nil {
		return answer{}, rowcall.Fail("agent", "bad_request", err.Error())
	}
	r := c.r
	for attempt := 0; ; attempt++ {
		status, hdr, raw, fail := c.post(ctx, body)
		if fail != nil {
			return answer{}, fail
		}
		c.out.Status, c.out.Material = status, true
		if status >= 200 && status < 300 {
			return c.parse(status, raw)
		}
		msg := errorMessage(raw, http.StatusText(status), c.out.Secrets)
		if status != http.StatusTooManyRequests && status < 500 {
			return answer{}, rowcall.Fail("agent", strconv.Itoa(status), msg)
		}
		if attempt >= r.retries {
			if attempt > 0 {
				msg += " (gave up after " + strconv.Itoa(attempt+1) + " attempts)"
			}
			return answer{}, rowcall.Fail("agent", strconv.Itoa(status), msg)
		}
		wait, ok := r.backoff(attempt, hdr, time.Now())
		if !ok {
			return answer{}, rowcall.Fail("agent", strconv.Itoa(status), msg+" (the provider asked for a retry after more than "+r.retryMax.String()+"; not waited for)")
		}
		if err := r.sleep(ctx, wait); err != nil {
			return answer{}, rowcall.Fail("agent", "canceled", err.Error())
		}
	}
}

// post sends one request and reads the whole answer.
func (c *conversation) post(parent context.Context, body []byte) (int, http.Header, []byte, *rowcall.Failure) {
	r := c.r
	ctx, cancel := context.WithTimeout(parent, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, rowcall.Fail("agent", "bad_target", redact.String(httpcall.FetchMessage(err), c.out.Secrets))
	}
	req.Header = c.headers.Clone()
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, nil, nil, c.transportFailure(parent, ctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, r.maxResponse+1))
	if err != nil {
		c.out.Status, c.out.Material = resp.StatusCode, true
		return 0, nil, nil, c.transportFailure(parent, ctx, err)
	}
	if int64(len(raw)) > r.maxResponse {
		c.out.Status, c.out.Material = resp.StatusCode, true
		return 0, nil, nil, rowcall.Fail("agent", "too_large", strconv.FormatInt(r.maxResponse, 10)+" bytes").
			Because("the provider answered " + strconv.Itoa(resp.StatusCode) + " with a larger body, which was not kept")
	}
	return resp.StatusCode, resp.Header, raw, nil
}

// transportFailure is the result for a request that got no (complete) answer.
func (c *conversation) transportFailure(parent, ctx context.Context, err error) *rowcall.Failure {
	if perr := parent.Err(); perr != nil {
		return rowcall.Fail("agent", "canceled", perr.Error())
	}
	if ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
		return rowcall.Fail("agent", "timeout", c.r.timeout.String()).Because(c.ep.name + " did not answer " + c.ep.model + " in time")
	}
	return rowcall.Fail("agent", "fetch", redact.String(httpcall.FetchMessage(err), c.out.Secrets))
}

// maxBodyText is how much of an answer that is not a chat completion is shown.
const maxBodyText = 200

// parse reads a 2xx answer as a chat completion.
func (c *conversation) parse(status int, raw []byte) (answer, *rowcall.Failure) {
	var comp completion
	if err := json.Unmarshal(raw, &comp); err != nil {
		return answer{}, rowcall.Fail("agent", "bad_response", "the provider answered "+strconv.Itoa(status)+
			" with a body that is not a chat completion ("+oneLine(err.Error())+"): "+shown(string(raw), maxBodyText, c.out.Secrets))
	}
	if len(comp.Choices) == 0 {
		if comp.Error != nil && comp.Error.Message != "" {
			return answer{}, rowcall.Fail("agent", "bad_response", "the provider answered "+strconv.Itoa(status)+" with an error: "+
				shown(comp.Error.Message, maxErrorText, c.out.Secrets))
		}
		return answer{}, rowcall.Fail("agent", "bad_response", "the provider answered "+strconv.Itoa(status)+" with no choices")
	}
	if comp.Usage != nil {
		c.usage.PromptTokens += comp.Usage.PromptTokens
		c.usage.CompletionTokens += comp.Usage.CompletionTokens
		c.usage.TotalTokens += comp.Usage.TotalTokens
	}
	return comp.Choices[0].Message, nil
}

// backoff is the wait before retry number attempt+1: the provider's
// Retry-After when it sent one (plus up to a tenth of it as jitter), else
// RetryBase doubled per attempt, capped at RetryMax, with equal jitter. ok is
// false when the provider asked for more than RetryMax.
func (r *Runner) backoff(attempt int, h http.Header, now time.Time) (time.Duration, bool) {
	if ra, found := retryAfter(h, now); found {
		if ra > r.retryMax {
			return 0, false
		}
		return min(ra+jitter(ra/10), r.retryMax), true
	}
	d := r.retryBase << attempt
	if d <= 0 || d > r.retryMax {
		d = r.retryMax
	}
	return d/2 + jitter(d/2), true
}

func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

// retryAfter reads retry-after-ms (milliseconds, as OpenAI sends it) or
// Retry-After (seconds, or an HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(min(ms, maxRetryAfter.Seconds()*1000) * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(min(s, maxRetryAfter.Seconds()) * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// maxRetryAfter bounds a parsed Retry-After, so a huge value cannot overflow.
const maxRetryAfter = 24 * time.Hour

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
