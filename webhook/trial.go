package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"shipgraph/model"
	"shipgraph/netguard"
)

// TrialOptions say how a one-time test delivery connects: as deliveries do
// (the same SSRF guard unless AllowPrivate; Resolve replaces DNS in tests).
type TrialOptions struct {
	AllowPrivate bool
	Resolve      func(ctx context.Context, host string) ([]netip.Addr, error)
	Timeout      time.Duration // 0: Defaults.Timeout
}

// Trial sends body once to rawURL, signed with secret when there is one,
// with the headers a delivery carries, and reports what happened: the
// receiver's status, headers and the start of its body, or the error. It
// never retries and stores nothing. Errors never carry the secret.
func Trial(ctx context.Context, o TrialOptions, rawURL, secret string, body []byte) *model.WebhookTrial {
	if o.Timeout <= 0 {
		o.Timeout = Defaults.Timeout
	}
	out := &model.WebhookTrial{URL: rawURL, RequestBody: string(body), RequestHeaders: map[string]string{}}
	fail := func(err error) *model.WebhookTrial {
		msg := err.Error()
		out.Error = &msg
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return fail(errors.New("invalid webhook URL"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Shipgraph-Webhooks/1")
	if secret != "" {
		req.Header.Set(SignatureHeader, Sign(secret, body))
	}
	for k := range req.Header {
		out.RequestHeaders[k] = req.Header.Get(k)
	}
	client := &http.Client{
		Transport: &http.Transport{DialContext: dialContext(o.AllowPrivate, o.Resolve), ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: o.Timeout, ResponseHeaderTimeout: o.Timeout},
		// A test delivery reports the receiver's own answer: a redirect is
		// an answer, not followed (a redirect could lead past the guard).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var refused *netguard.Error
		switch {
		case errors.As(err, &refused):
			return fail(refused)
		case errors.Is(err, context.DeadlineExceeded):
			return fail(fmt.Errorf("timeout after %s", o.Timeout))
		}
		return fail(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	code, text := resp.StatusCode, cleanBody(b)
	out.StatusCode, out.ResponseBody = &code, &text
	out.ResponseHeaders = make(map[string]string, len(resp.Header))
	for k := range resp.Header {
		out.ResponseHeaders[k] = resp.Header.Get(k)
	}
	out.Succeeded = succeeded(code)
	if !out.Succeeded {
		msg := fmt.Sprintf("the receiver answered %d", code)
		out.Error = &msg
	}
	return out
}
