// Package browsertest drives the Shipgraph playground in headless Chromium,
// the way a person would use it: open the page, press GraphiQL's run button,
// read the result pane.
//
// The browser may reach loopback only. Every request leaves through the
// DevTools fetch domain, which fails anything not addressed to 127.0.0.0/8,
// [::1] or localhost and records it; the host resolver additionally maps all
// other names to NOTFOUND, covering browser-internal traffic the fetch
// domain does not see. So a passing run proves the page works offline.
//
// Chromium is Debian's /usr/bin/chromium (apt-get install -y chromium) unless
// $CHROMIUM names another binary. Starting it takes roughly 0.5–2 s.
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Selectors of GraphiQL 3 the driver relies on (see also the playground
// package doc). GraphiQL's class names are its de-facto public styling API
// and stable across 3.x.
const (
	// ReadySelector matches once playground.js has rendered GraphiQL.
	ReadySelector = `body[data-sg-ready="true"]`
	// ExecuteButtonSelector is GraphiQL's run ("Execute query") button.
	ExecuteButtonSelector = ".graphiql-execute-button"
	// ResultSelector is the result pane: a CodeMirror 5 editor inside it
	// holds the response JSON.
	ResultSelector = ".graphiql-response .result-window"
)

// settledJS is true once playground.js has seen at least one request
// (GraphiQL's start-up introspection) complete and none is in flight; see
// the data-sg-* attributes in the playground package doc.
const settledJS = `(() => { const d = document.body.dataset; return Number(d.sgFetches || 0) >= 1 && d.sgInflight === "0"; })()`

// settleWait bounds the wait for settledJS.
const settleWait = 10 * time.Second

// DefaultChromium is used when $CHROMIUM is unset.
const DefaultChromium = "/usr/bin/chromium"

// resultTextJS reads the result pane's full text. CodeMirror renders only
// the visible lines into the DOM, so ask the editor instance first.
const resultTextJS = `(() => {
  const pane = document.querySelector(` + "`" + ResultSelector + "`" + `);
  if (!pane) return "";
  const cm = pane.querySelector(".CodeMirror");
  if (cm && cm.CodeMirror) return cm.CodeMirror.getValue();
  return pane.innerText || "";
})()`

// Options tunes Run. The zero value is fine.
type Options struct {
	// Wait bounds how long to wait for the page and then for the result.
	// Default 45 s, or up to 2 s before ctx's deadline if that is sooner.
	Wait time.Duration
	// ScreenshotPath, when set, receives a PNG of the page after the result
	// appeared, or at the moment of failure (useful when debugging).
	ScreenshotPath string
	// Width and height of the browser window; default 1280x800.
	Width, Height int
}

// Result is what a run observed.
type Result struct {
	Text          string   // result pane text
	Requests      []string // every URL the page tried to fetch, in order
	Blocked       []string // the subset refused because it was not loopback
	ConsoleErrors []string // console.error calls, uncaught exceptions, error log entries (e.g. CSP)
}

// RunExampleQuery opens pageURL in headless Chromium, waits for GraphiQL,
// clicks the run button, waits until the result pane shows text containing
// wantSubstring (or times out) and returns the result pane text. It fails if
// the page tried to reach any host other than loopback.
func RunExampleQuery(ctx context.Context, pageURL, wantSubstring string) (string, error) {
	res, err := Run(ctx, pageURL, wantSubstring, Options{})
	if err != nil {
		return res.Text, err
	}
	if len(res.Blocked) > 0 {
		return res.Text, fmt.Errorf("page tried to reach non-loopback hosts: %s", strings.Join(res.Blocked, ", "))
	}
	return res.Text, nil
}

// Screenshot opens pageURL, waits for GraphiQL to render and writes a PNG
// of the viewport to pngPath; a helper for humans checking the look.
func Screenshot(ctx context.Context, pageURL, pngPath string) error {
	_, err := session(ctx, pageURL, Options{ScreenshotPath: pngPath}, nil)
	return err
}

// Run is RunExampleQuery with options and the full observation. The
// returned Result is filled as far as the run got, also on error.
func Run(ctx context.Context, pageURL, wantSubstring string, opts Options) (Result, error) {
	return session(ctx, pageURL, opts, func(ctx context.Context, wait time.Duration) (string, error) {
		// GraphiQL introspects on mount; if that fails (introspection off,
		// bad key) it writes the error into the result pane whenever it
		// arrives. Let it settle first so it cannot overwrite our result.
		// Not fatal: a page without the hook just proceeds after the bound.
		var settled bool
		_ = chromedp.Run(ctx, chromedp.Poll(settledJS, &settled,
			chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(min(settleWait, wait/2))))
		if err := chromedp.Run(ctx, chromedp.Click(ExecuteButtonSelector, chromedp.ByQuery)); err != nil {
			return "", fmt.Errorf("click run button: %w", err)
		}
		// Poll in the page: the predicate returns the text once it contains
		// the wanted substring, false until then.
		want, _ := json.Marshal(wantSubstring)
		var text string
		err := chromedp.Run(ctx, chromedp.Poll(
			fmt.Sprintf(`((t) => t.includes(%s) ? t : false)(%s)`, want, resultTextJS),
			&text,
			chromedp.WithPollingInterval(100*time.Millisecond),
			chromedp.WithPollingTimeout(wait),
		))
		if err != nil {
			// Report what the pane did show: usually an error from the
			// server or GraphiQL, which is the real diagnosis.
			var shown string
			_ = chromedp.Run(ctx, chromedp.Evaluate(resultTextJS, &shown))
			return shown, fmt.Errorf("result pane did not show %q within %s (it shows %q): %w", wantSubstring, wait, shown, err)
		}
		return text, nil
	})
}

// session starts a browser, opens pageURL, waits for GraphiQL, runs act
// (when non-nil) and takes the optional screenshot.
func session(parent context.Context, pageURL string, opts Options, act func(context.Context, time.Duration) (string, error)) (res Result, err error) {
	wait := opts.Wait
	if wait <= 0 {
		wait = 45 * time.Second
	}
	// Leave time to collect diagnostics before the caller's deadline
	// kills the browser.
	if dl, ok := parent.Deadline(); ok {
		if left := time.Until(dl) - 2*time.Second; left < wait {
			wait = max(left, time.Second)
		}
	}
	if opts.Width <= 0 || opts.Height <= 0 {
		opts.Width, opts.Height = 1280, 800
	}

	start := time.Now()
	b, err := Start(parent, opts)
	if err != nil {
		return res, fmt.Errorf("%s: %w", stepStart, err)
	}
	defer b.Close()
	startup := time.Since(start)
	ctx, obs, stderr := b.Ctx, b.obs, b.stderr

	fail := func(step string, err error) (Result, error) {
		if opts.ScreenshotPath != "" {
			_ = screenshot(ctx, opts.ScreenshotPath)
		}
		obs.fill(&res)
		if out := stderr.String(); out != "" && (step == stepStart || ctx.Err() != nil) {
			err = fmt.Errorf("%w\nchromium output:\n%s", err, tail(out, 2000))
		}
		return res, fmt.Errorf("%s: %w", step, err)
	}

	waitCtx, cancelWait := context.WithTimeout(ctx, wait)
	defer cancelWait()
	if err := chromedp.Run(waitCtx,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(ReadySelector, chromedp.ByQuery),
		chromedp.WaitVisible(ExecuteButtonSelector, chromedp.ByQuery),
	); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("GraphiQL did not render within %s (chromium started in %s): %w", wait, startup.Round(time.Millisecond), err)
		}
		return fail("open playground", err)
	}

	if act != nil {
		// The result wait gets what is left of the window; act uses ctx,
		// not waitCtx, so it can still read the pane after timing out.
		dl, _ := waitCtx.Deadline()
		text, err := act(ctx, max(time.Until(dl), time.Second))
		res.Text = text
		if err != nil {
			return fail("run example query", err)
		}
	}
	if opts.ScreenshotPath != "" {
		if err := screenshot(ctx, opts.ScreenshotPath); err != nil {
			return fail("screenshot", err)
		}
	}
	obs.fill(&res)
	return res, nil
}

const stepStart = "start chromium"

// Browser is a headless Chromium whose page may reach loopback only (see
// the package doc), for drivers of other pages than the playground: run
// chromedp actions on Ctx; Close ends it.
type Browser struct {
	Ctx    context.Context
	obs    *observations
	stderr *lockedBuffer
	close  func()
}

// Close stops the browser and removes its profile.
func (b *Browser) Close() { b.close() }

// Observed is what the page did so far: its requests, those blocked for
// not being loopback, and its console errors (Result.Text stays empty).
func (b *Browser) Observed() Result {
	var res Result
	b.obs.fill(&res)
	return res
}

// Start launches Chromium with opts' window size (Wait and ScreenshotPath
// are not used), every request filtered to loopback before the first
// navigation. The browser ends with parent or Close.
func Start(parent context.Context, opts Options) (*Browser, error) {
	if opts.Width <= 0 || opts.Height <= 0 {
		opts.Width, opts.Height = 1280, 800
	}
	exe := os.Getenv("CHROMIUM")
	if exe == "" {
		exe = DefaultChromium
	}
	if _, statErr := os.Stat(exe); statErr != nil {
		return nil, fmt.Errorf("chromium not found at %s (apt-get install -y chromium, or set $CHROMIUM): %w", exe, statErr)
	}
	profile, err := os.MkdirTemp("", "browsertest-profile-")
	if err != nil {
		return nil, err
	}

	var stderr lockedBuffer
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent,
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(opts.Width, opts.Height),
		chromedp.CombinedOutput(&stderr),
		chromedp.Flag("headless", true),
		// Containers and CI run as root without user namespaces.
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// No traffic of Chromium's own: updates, sync, metrics, QUIC.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("mute-audio", true),
		// Second fence behind the fetch-domain filter below.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &Browser{Ctx: ctx, obs: &observations{}, stderr: &stderr, close: func() {
		cancel()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	}}
	obs := b.obs

	// The listener runs on chromedp's goroutines, also after session
	// returns (until the browser is gone), so it fills obs, never res.
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *fetch.EventRequestPaused:
			u := ev.Request.URL
			ok := isLoopback(u)
			obs.request(u, !ok)
			// Answering from inside the listener would deadlock the
			// event loop; chromedp requires a goroutine here.
			go func() {
				ectx := cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Target)
				if ok {
					_ = fetch.ContinueRequest(ev.RequestID).Do(ectx)
				} else {
					_ = fetch.FailRequest(ev.RequestID, network.ErrorReasonBlockedByClient).Do(ectx)
				}
			}()
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
				obs.consoleError("console." + string(ev.Type) + ": " + argsText(ev.Args))
			}
		case *runtime.EventExceptionThrown:
			msg := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
			obs.consoleError("exception: " + msg)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError {
				obs.consoleError(fmt.Sprintf("log(%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})

	// The first Run starts Chromium; enabling fetch before navigating
	// means the page's very first request is already filtered.
	if err := chromedp.Run(ctx,
		fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*"}}),
		log.Enable(),
		runtime.Enable(),
	); err != nil {
		out := stderr.String()
		b.Close()
		return nil, fmt.Errorf("%w\nchromium output:\n%s", err, tail(out, 2000))
	}
	return b, nil
}

type observations struct {
	mu            sync.Mutex
	requests      []string
	blocked       []string
	consoleErrors []string
}

func (o *observations) request(u string, blocked bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests = append(o.requests, u)
	if blocked {
		o.blocked = append(o.blocked, u)
	}
}

func (o *observations) consoleError(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.consoleErrors = append(o.consoleErrors, msg)
}

// fill copies the observations so far into res.
func (o *observations) fill(res *Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	res.Requests = append([]string(nil), o.requests...)
	res.Blocked = append([]string(nil), o.blocked...)
	res.ConsoleErrors = append([]string(nil), o.consoleErrors...)
}

func screenshot(ctx context.Context, path string) error {
	var png []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

// isLoopback reports whether u may be fetched: loopback HTTP(S)/WS(S), or
// schemes that never touch the network.
func isLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return true
	case "http", "https", "ws", "wss":
	default:
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// lockedBuffer collects Chromium's output, written from chromedp's goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// queryEditorJS sets the query editor's text (GraphiQL 3's CodeMirror 5
// instance), returning false when the editor is not found.
const queryEditorJS = `((q) => {
  const cm = document.querySelector(".graphiql-query-editor .CodeMirror");
  if (!cm || !cm.CodeMirror) return false;
  cm.CodeMirror.setValue(q);
  return true;
})(%s)`

// queryParsedJS is true once GraphiQL has parsed the query editor's
// current text: its debounced change handler sets the editor's
// documentAST (graphql-js's parse, whose loc.source.body is the text
// parsed) and the operation name a run sends.
const queryParsedJS = `(() => {
  const el = document.querySelector(".graphiql-query-editor .CodeMirror");
  const cm = el && el.CodeMirror;
  const ast = cm && cm.documentAST;
  return !!(ast && ast.loc && ast.loc.source.body === cm.getValue());
})()`

// RunSubscription opens pageURL, replaces the operation in the editor with
// query (a subscription), runs it, and then calls trigger (which should
// cause an event) every half second until the result pane shows
// wantSubstring. It returns what the run observed, the pane's text in
// Result.Text.
func RunSubscription(ctx context.Context, pageURL, query, wantSubstring string, trigger func() error) (Result, error) {
	return session(ctx, pageURL, Options{}, func(ctx context.Context, wait time.Duration) (string, error) {
		var settled bool
		_ = chromedp.Run(ctx, chromedp.Poll(settledJS, &settled,
			chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(min(settleWait, wait/2))))
		q, _ := json.Marshal(query)
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(queryEditorJS, q), &ok)); err != nil || !ok {
			return "", fmt.Errorf("set the query in the editor: found %v, %v", ok, err)
		}
		// GraphiQL parses the edited document (and picks the operation
		// name) after a debounce; a click before would run the old one.
		var parsed bool
		if err := chromedp.Run(ctx, chromedp.Poll(queryParsedJS, &parsed,
			chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(wait/2))); err != nil {
			return "", fmt.Errorf("GraphiQL did not parse the edited query: %w", err)
		}
		if err := chromedp.Run(ctx, chromedp.Click(ExecuteButtonSelector, chromedp.ByQuery)); err != nil {
			return "", fmt.Errorf("click run button: %w", err)
		}
		var shown string
		for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
			if err := trigger(); err != nil {
				return shown, err
			}
			if err := chromedp.Run(ctx, chromedp.Evaluate(resultTextJS, &shown)); err != nil {
				return shown, err
			}
			if strings.Contains(shown, wantSubstring) {
				return shown, nil
			}
			select {
			case <-ctx.Done():
				return shown, ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
		return shown, fmt.Errorf("result pane did not show %q within %s (it shows %q)", wantSubstring, wait, shown)
	})
}
