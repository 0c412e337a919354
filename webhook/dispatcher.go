package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/netguard"
)

// PayloadFunc renders one notification as the exact body to sign and send
// (app/background.go wires rest.NotificationPayload).
type PayloadFunc func(ctx context.Context, accountID, notificationID string) ([]byte, error)

// Config is the engine's configuration; zero values are the defaults.
type Config struct {
	Workers      int           // WEBHOOK_WORKERS: deliveries in flight per process (8)
	PerWebhook   int           // deliveries in flight per webhook, all processes together (2)
	Timeout      time.Duration // WEBHOOK_TIMEOUT: one attempt, connection to last byte (10s)
	RetryBase    time.Duration // WEBHOOK_RETRY_BASE: first retry's ceiling (30s)
	ClaimMargin  time.Duration // a claim lasts Timeout+ClaimMargin (15s)
	Poll         time.Duration // look for due work at least this often (1s)
	QueueLimit   int           // WEBHOOK_QUEUE_LIMIT: pending notifications per account (10000)
	Batch        int           // change_log rows per fan-out transaction (500)
	AllowPrivate bool          // WEBHOOK_ALLOW_PRIVATE_URLS: no address guard at delivery
	Payload      PayloadFunc
	Logger       *slog.Logger
	// Owner names this process' claims (claimed_by); default host-pid-random.
	Owner string
	// Resolve replaces DNS at delivery (tests: a name that resolves to
	// a private address now).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Abort, when cancelled, abandons deliveries in flight without
	// recording them (tests: a process killed mid-delivery). Default: never.
	Abort context.Context
	// Tracer, when set (tracing is on, docs/tracing.md), gives every
	// attempt a span (tracing.go); nil: none, at no cost.
	Tracer trace.TracerProvider
	// ChangeLogRetention is CHANGE_LOG_RETENTION: the fan-out warns when
	// it is behind by more than half of it (0: never).
	ChangeLogRetention time.Duration
}

// Defaults are Config's zero values' meaning.
var Defaults = Config{Workers: 8, PerWebhook: 2, Timeout: 10 * time.Second, RetryBase: 30 * time.Second,
	ClaimMargin: 15 * time.Second, Poll: time.Second, QueueLimit: 10000, Batch: 500}

func (c Config) withDefaults() Config {
	d := Defaults
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.PerWebhook <= 0 {
		c.PerWebhook = d.PerWebhook
	}
	if c.Timeout <= 0 {
		c.Timeout = d.Timeout
	}
	if c.RetryBase <= 0 {
		c.RetryBase = d.RetryBase
	}
	if c.ClaimMargin <= 0 {
		c.ClaimMargin = d.ClaimMargin
	}
	if c.Poll <= 0 {
		c.Poll = d.Poll
	}
	if c.QueueLimit <= 0 {
		c.QueueLimit = d.QueueLimit
	}
	if c.Batch <= 0 {
		c.Batch = d.Batch
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Owner == "" {
		host, _ := os.Hostname()
		c.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randomHex(4))
	}
	if c.Abort == nil {
		c.Abort = context.Background()
	}
	return c
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// randomUUID is a random point on the webhooks' id circle (the claim's
// start: no endpoint is always served first).
func randomUUID() string {
	h := randomHex(16)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Dispatcher delivers due notifications: every process runs one; they
// share the work through claims in the database.
type Dispatcher struct {
	store  *db.DB
	cfg    Config
	client *http.Client
	wake   chan struct{}

	// due are the accounts with due work Run last found, and when (read
	// and written by Run's goroutine only): claims go through them until
	// they are drained or dueFresh has passed, or a wake-up came.
	due   []string
	dueAt time.Time
}

// NewDispatcher returns a dispatcher over store; Run starts it.
func NewDispatcher(store *db.DB, cfg Config) *Dispatcher {
	cfg = cfg.withDefaults()
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would connect for us, past the address guard
		DialContext:           dialContext(cfg.AllowPrivate, cfg.Resolve),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   cfg.PerWebhook,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.Timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &Dispatcher{store: store, cfg: cfg, wake: make(chan struct{}, 1), client: &http.Client{
		Transport: tr,
		// Redirects are not followed: a 3xx is a failed attempt (and
		// a redirect could lead anywhere, past the creation check).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Owner is the name of this dispatcher's claims.
func (d *Dispatcher) Owner() string { return d.cfg.Owner }

// Wake makes the dispatcher look for due work now (the fan-out raised some).
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx is done, then waits for the deliveries in flight
// to finish (each is bounded by Timeout) and returns. It claims only as
// many notifications as it has idle workers, so nothing it holds is left
// unstarted; a process killed meanwhile leaves claims that expire after
// Timeout+ClaimMargin and are delivered by another process, or by itself
// after a restart.
func (d *Dispatcher) Run(ctx context.Context) {
	done := make(chan struct{}, d.cfg.Workers)
	inflight := 0
	var wg sync.WaitGroup
	defer wg.Wait()
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		more := false
		if free := d.cfg.Workers - inflight; free > 0 && ctx.Err() == nil {
			ds, err := d.claim(ctx, free)
			if err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("webhook claim failed", "err", err)
			}
			for i := range ds {
				inflight++
				wg.Add(1)
				go func(w *db.WebhookDelivery) {
					defer wg.Done()
					d.deliver(w)
					done <- struct{}{}
				}(&ds[i])
			}
			more = len(ds) == free
		}
		if !more {
			poll.Reset(d.cfg.Poll)
		}
		if more {
			// Claimed a full batch: there may be more, once a worker
			// is free.
			select {
			case <-ctx.Done():
				return
			case <-done:
				inflight--
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-done:
			inflight--
		case <-d.wake:
			d.dueAt = time.Time{} // new work: look for its accounts
		case <-poll.C:
			d.dueAt = time.Time{}
		}
	}
}

// dueAccounts is how many accounts with due work one look finds.
const dueAccounts = 100

// dueFresh is how long the accounts found are claimed from before they are
// looked for again (a busy dispatcher claims after every delivery: it
// would otherwise read every due row's account each time).
const dueFresh = 250 * time.Millisecond

// claim claims up to free due notifications: it finds the accounts with
// due work (no locks), then claims one account's at a time, so every
// locking statement names one account (a single shard on Citus). An
// account that gave fewer than asked is drained for now and dropped from
// the accounts found. What it claimed before an error is returned with it
// (to be delivered).
func (d *Dispatcher) claim(ctx context.Context, free int) ([]db.WebhookDelivery, error) {
	if len(d.due) == 0 || time.Since(d.dueAt) > dueFresh {
		accounts, err := d.store.WebhookDueAccounts(ctx, dueAccounts, randomUUID())
		if err != nil {
			return nil, err
		}
		d.due, d.dueAt = accounts, time.Now()
	}
	claim := d.cfg.Timeout + d.cfg.ClaimMargin
	// A claim runs to its end even when Run's context is cancelled: a
	// drain that cancelled it between the statement's commit and its rows'
	// reading would leave claims no worker holds (delivered only after
	// they expire). Run starts no claim once its context is done.
	cctx, cancel := context.WithTimeout(d.cfg.Abort, d.cfg.Timeout)
	defer cancel()
	var out []db.WebhookDelivery
	keep := d.due[:0]
	for i, a := range d.due {
		want := free - len(out)
		if want <= 0 {
			keep = append(keep, d.due[i:]...)
			break
		}
		ds, err := d.store.ClaimWebhookDeliveries(cctx, a, d.cfg.Owner, want, d.cfg.PerWebhook, claim, randomUUID())
		if err != nil {
			d.due = nil
			return out, err
		}
		out = append(out, ds...)
		if len(ds) == want {
			keep = append(keep, a) // it may have more
		}
	}
	d.due = keep
	return out, nil
}

// forbiddenHeaders may not be set by a webhook's custom headers (the
// API refuses them too; this keeps old rows harmless).
var forbiddenHeaders = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Host": true, "Connection": true,
	"Transfer-Encoding": true, "Te": true, "Trailer": true, "Upgrade": true, "Keep-Alive": true,
	"Proxy-Connection": true, "Proxy-Authorization": true, http.CanonicalHeaderKey(SignatureHeader): true,
}

// maxResponseBody is the most of a response body an attempt keeps.
const maxResponseBody = 4096

// succeeded: only these statuses deliver a notification.
func succeeded(code int) bool {
	return code == 200 || code == 201 || code == 202 || code == 204
}

// deliver makes one attempt and records it. It runs to its end even when
// Run's context is cancelled (a drain lets it finish); only Abort stops it
// unrecorded.
func (d *Dispatcher) deliver(w *db.WebhookDelivery) {
	abort := d.cfg.Abort
	ctx, cancel := context.WithTimeout(abort, d.cfg.Timeout)
	defer cancel()
	start := time.Now()
	a := db.WebhookAttempt{AccountID: w.AccountID, NotificationID: w.ID, Owner: d.cfg.Owner}
	ctx, sp := d.startSpan(ctx, w)
	defer func() { endSpan(sp, &a) }()
	body, err := d.cfg.Payload(ctx, w.AccountID, w.ID)
	if err != nil {
		if model.ErrorCode(err) == model.ENOTFOUND {
			return // deleted with its webhook meanwhile: nothing to deliver, nothing to record
		}
		if abort.Err() != nil {
			return
		}
		a.Error = "rendering the payload: " + err.Error()
		d.cfg.Logger.Error("webhook payload", "notification", w.ID, "err", err)
	} else {
		a.StatusCode, a.ResponseBody, err = d.post(ctx, w, body)
		if err != nil {
			a.Error = err.Error()
		}
	}
	a.Duration = time.Since(start)
	if abort.Err() != nil {
		return // "killed": the claim stays behind and expires
	}
	AttemptSeconds.Observe(a.Duration.Seconds())
	attempt := w.Attempts + 1
	switch {
	case a.Error == "" && succeeded(a.StatusCode):
		a.Status = db.WebhookSucceeded
	case attempt >= MaxAttempts:
		a.Status = db.WebhookFailed
	default:
		a.Status = db.WebhookPending
		a.Retry = Backoff(d.cfg.RetryBase, attempt, jitter())
	}
	if a.Error == "" && a.Status != db.WebhookSucceeded {
		a.Error = fmt.Sprintf("HTTP %d: only 200, 201, 202 and 204 deliver", a.StatusCode)
	}
	// Recording gets a moment of its own, past the attempt's deadline.
	rctx, rcancel := context.WithTimeout(abort, 10*time.Second)
	defer rcancel()
	if sp != nil {
		rctx = trace.ContextWithSpan(rctx, sp) // its statements belong to the attempt's trace
	}
	held, err := d.record(rctx, a)
	if err != nil {
		if abort.Err() == nil {
			d.cfg.Logger.Error("webhook attempt not recorded", "notification", w.ID, "err", err)
		}
		return
	}
	switch a.Status {
	case db.WebhookSucceeded:
		deliveredOK.Inc()
		LatencySeconds.Observe(time.Since(w.CreatedAt).Seconds())
	case db.WebhookFailed:
		deliveredFail.Inc()
		d.cfg.Logger.Warn("webhook notification failed", "notification", w.ID, "webhook", w.WebhookID, "attempts", attempt, "err", a.Error)
	default:
		deliveredRetry.Inc()
	}
	if !held {
		d.cfg.Logger.Warn("webhook attempt outlived its claim", "notification", w.ID)
	}
}

// record records attempt a, again while the database is unavailable (a
// primary lost or switched: the new one takes it, the claim having been
// replicated with the commit that made it) until ctx ends. An attempt left
// unrecorded is made again once its claim expires, Timeout+ClaimMargin
// later: the endpoint gets the notification twice. (A retried record
// whose first COMMIT did land after all, its answer lost, adds a second
// attempt row and finds the claim gone: held is false.)
func (d *Dispatcher) record(ctx context.Context, a db.WebhookAttempt) (bool, error) {
	wait := 50 * time.Millisecond
	for {
		held, err := d.store.RecordWebhookAttempt(ctx, a)
		if err == nil || model.ErrorCode(err) != model.EUNAVAILABLE {
			return held, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return held, err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// post sends body to the webhook and returns the status and the start of
// the response body. Errors never carry the secret, nor the URL (which may
// hold credentials of its own).
func (d *Dispatcher) post(ctx context.Context, w *db.WebhookDelivery, body []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "", errors.New("invalid webhook URL")
	}
	for _, h := range w.Headers {
		if forbiddenHeaders[http.CanonicalHeaderKey(h.Name)] {
			continue
		}
		req.Header.Set(h.Name, h.Value)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Shipgraph-Webhooks/1")
	req.Header.Set(SignatureHeader, Sign(w.Secret, body))
	sp := d.startHTTPSpan(ctx, req)
	resp, err := d.client.Do(req)
	endHTTPSpan(sp, resp, err)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var refused *netguard.Error
		if errors.As(err, &refused) {
			return 0, "", refused // names the address, never the URL
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, "", fmt.Errorf("timeout after %s", d.cfg.Timeout)
		}
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	text := cleanBody(b)
	if err != nil && succeeded(resp.StatusCode) {
		// The status is what delivers; a body cut short does not undo it.
		err = nil
	}
	return resp.StatusCode, text, err
}

// cleanBody makes a response body storable as text: valid UTF-8, no NUL,
// at most maxResponseBody bytes.
func cleanBody(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	for len(s) > maxResponseBody {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}
