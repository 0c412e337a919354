//go:build browser

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/browsertest"
	"shipgraph/web/ops"
)

// AXE_CORE_VERSION is the pinned axe-core the accessibility check injects.
const axeCoreVersion = "4.10.3"

// opsDriver drives /ops in headless Chromium (loopback only), through a
// TCP proxy in front of the server so a test can drop the page's
// connections, WebSocket included, as a network failure would.
type opsDriver struct {
	t     *testing.T
	b     *browsertest.Browser
	ctx   context.Context
	proxy *dropProxy
	base  string // the server itself, for the Go side's API calls
	page  string // /ops through the proxy

	mu       sync.Mutex
	requests int     // HTTP responses the page received from the server
	n304     int     // of which 304
	bytes    float64 // encoded bytes received (headers and bodies)
}

func newOpsDriver(t *testing.T, ctx context.Context, base string) *opsDriver {
	t.Helper()
	if !ops.Built() {
		t.Fatal("the operations page is not built into this test binary: run `make ops` (make test-browser does)")
	}
	px := newDropProxy(t, strings.TrimPrefix(base, "http://"))
	b, err := browsertest.Start(ctx, browsertest.Options{Width: 1400, Height: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	d := &opsDriver{t: t, b: b, ctx: b.Ctx, proxy: px, base: base, page: "http://" + px.addr + "/ops"}
	chromedp.ListenTarget(b.Ctx, func(ev any) {
		switch ev := ev.(type) {
		case *network.EventResponseReceived:
			if ev.Type == network.ResourceTypeFetch || ev.Type == network.ResourceTypeXHR {
				d.mu.Lock()
				d.requests++
				if ev.Response.Status == http.StatusNotModified {
					d.n304++
				}
				d.mu.Unlock()
			}
		case *network.EventLoadingFinished:
			d.mu.Lock()
			d.bytes += ev.EncodedDataLength
			d.mu.Unlock()
		}
	})
	if err := chromedp.Run(b.Ctx, network.Enable(), performance.Enable()); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *opsDriver) run(actions ...chromedp.Action) {
	d.t.Helper()
	if err := chromedp.Run(d.ctx, actions...); err != nil {
		d.fail(err)
	}
}

// fail ends the test with what the page showed and logged.
func (d *opsDriver) fail(err error) {
	d.t.Helper()
	var alert, state string
	c, cancel := context.WithTimeout(d.ctx, 5*time.Second)
	defer cancel()
	_ = chromedp.Run(c, chromedp.Evaluate(`document.getElementById("alert").textContent + " | " + JSON.stringify(document.body.dataset)`, &alert))
	_ = state
	d.screenshot("ops-failure.png")
	d.t.Fatalf("%v\npage: %s\nobserved: %+v", err, alert, d.b.Observed().ConsoleErrors)
}

func (d *opsDriver) eval(js string, out any) {
	d.t.Helper()
	d.run(chromedp.Evaluate(js, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
}

// waitJS waits, with a deadline, until the page expression js is truthy;
// it is checked on every DOM change (a MutationObserver), no polling
// interval. It returns the time it took.
func (d *opsDriver) waitJS(js string, deadline time.Duration) time.Duration {
	d.t.Helper()
	start := time.Now()
	script := fmt.Sprintf(`new Promise((resolve) => {
  const check = () => { try { return !!(%s); } catch (e) { return false; } };
  if (check()) return resolve(true);
  const timer = setTimeout(() => { obs.disconnect(); resolve(false); }, %d);
  const obs = new MutationObserver(() => { if (check()) { clearTimeout(timer); obs.disconnect(); resolve(true); } });
  obs.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})`, js, deadline.Milliseconds())
	var ok bool
	d.eval(script, &ok)
	took := time.Since(start)
	if !ok {
		d.fail(fmt.Errorf("not within %s: %s", deadline, js))
	}
	return took
}

func (d *opsDriver) screenshot(name string) string {
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = "artifacts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.t.Error(err)
		return ""
	}
	var png []byte
	c, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(c, chromedp.FullScreenshot(&png, 100)); err != nil {
		d.t.Errorf("screenshot: %v", err)
		return ""
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		d.t.Error(err)
	}
	return p
}

// enterKey types key into the key form and submits it, as a person does.
func (d *opsDriver) enterKey(key string) {
	d.t.Helper()
	d.run(chromedp.WaitVisible(`#api-key`, chromedp.ByID))
	d.setValue("api-key", "")
	d.run(chromedp.SendKeys(`#api-key`, key+"\r", chromedp.ByID))
}

// setValue sets a form control's value (a select's choice, or clearing an
// input before typing).
func (d *opsDriver) setValue(id, v string) {
	d.t.Helper()
	d.eval(fmt.Sprintf(`document.getElementById(%q).value = %q`, id, v), nil)
}

// rows is the table as the page shows it: B/L (first row of a shipment
// only), container number, status text.
func (d *opsDriver) rows() [][3]string {
	var out [][3]string
	d.eval(`Array.from(document.querySelectorAll("#shipments tbody tr")).map((tr) => [
  tr.classList.contains("first") ? tr.querySelector('[data-col="bl"]').textContent : "", tr.querySelector('[data-col="container"]').textContent, tr.querySelector('[data-col="status"]').textContent])`, &out)
	return out
}

// gql runs a GraphQL document against the server from Go (the API's own
// answer the page is compared with).
func gql(t *testing.T, base, key, query string, vars map[string]any, out any) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	res := testkit.Send(t, http.MethodPost, base+"/graphql", key, body)
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.Unmarshal(res.Body, &r); err != nil {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	var msgs []string
	for _, e := range r.Errors {
		msgs = append(msgs, e.Message)
	}
	if out != nil && len(r.Data) > 0 && string(r.Data) != "null" {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatal(err)
		}
	}
	return msgs
}

const tilesQuery = `{
  byStatus: containerStats(groupBy: [STATUS]) { status count }
  byLastFreeDay: containerStats(filter: { statuses: [NEW, ON_SHIP, AVAILABLE, NOT_AVAILABLE, GROUNDED] }, groupBy: [LAST_FREE_DAY]) { lastFreeDay count }
  holds: containerStats(filter: { hasHolds: true }, groupBy: [STATUS]) { count }
}`

// apiTiles is what the tiles must show, from the API's grouped counts.
func apiTiles(t *testing.T, base, key string) map[string]string {
	t.Helper()
	var r struct {
		ByStatus []struct {
			Status *string
			Count  int
		}
		ByLastFreeDay []struct {
			LastFreeDay *string
			Count       int
		}
		Holds []struct{ Count int }
	}
	if errs := gql(t, base, key, tilesQuery, nil, &r); len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]string{"lfd:OVERDUE": "0", "lfd:TODAY": "0", "lfd:NEXT_3_DAYS": "0"}
	for _, g := range r.ByStatus {
		s := "UNKNOWN"
		if g.Status != nil {
			s = *g.Status
		}
		want["status:"+s] = fmt.Sprint(g.Count)
	}
	for _, g := range r.ByLastFreeDay {
		if g.LastFreeDay != nil {
			if _, ok := want["lfd:"+*g.LastFreeDay]; ok {
				want["lfd:"+*g.LastFreeDay] = fmt.Sprint(g.Count)
			}
		}
	}
	holds := 0
	for _, g := range r.Holds {
		holds += g.Count
	}
	want["holds:total"] = fmt.Sprint(holds)

	// Shipments arriving this week (Monday 00:00 UTC to the next), by port:
	// the busiest four (count, then name), the others summed.
	now := time.Now().UTC()
	monday := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -(int(now.Weekday())+6)%7)
	var a struct {
		Arrivals []struct {
			PortOfDischarge *struct{ ID, Name string }
			Count           int
		}
	}
	if errs := gql(t, base, key, `query($from: DateTime!, $to: DateTime!) { arrivals: shipmentStats(filter: { etaFrom: $from, etaTo: $to }, groupBy: [PORT_OF_DISCHARGE]) { portOfDischarge { id name } count } }`,
		map[string]any{"from": monday.Format(time.RFC3339), "to": monday.AddDate(0, 0, 7).Format(time.RFC3339)}, &a); len(errs) > 0 {
		t.Fatal(errs)
	}
	name := func(i int) string {
		if p := a.Arrivals[i].PortOfDischarge; p != nil {
			return p.Name
		}
		return "~"
	}
	sort.SliceStable(a.Arrivals, func(i, j int) bool {
		if a.Arrivals[i].Count != a.Arrivals[j].Count {
			return a.Arrivals[i].Count > a.Arrivals[j].Count
		}
		return name(i) < name(j)
	})
	other := 0
	for i, g := range a.Arrivals {
		if i >= 4 {
			other += g.Count
			continue
		}
		id := "unknown"
		if g.PortOfDischarge != nil {
			id = g.PortOfDischarge.ID
		}
		want["arrivals:"+id] = fmt.Sprint(g.Count)
	}
	if len(a.Arrivals) > 4 {
		want["arrivals:other"] = fmt.Sprint(other)
	}
	return want
}

// pageTiles reads the tiles the page shows.
func (d *opsDriver) pageTiles() map[string]string {
	var got map[string]string
	d.eval(`Object.fromEntries(Array.from(document.querySelectorAll("dd[data-tile]"))
  .filter((dd) => !dd.dataset.tile.endsWith(":none"))
  .map((dd) => [dd.dataset.tile, dd.textContent]))`, &got)
	return got
}

type apiPage struct {
	Shipments struct {
		TotalCount int
		PageInfo   struct{ EndCursor, StartCursor string }
		Edges      []struct {
			Node struct {
				ID, BillOfLadingNumber string
				Containers             []struct{ ID, Number, CurrentStatus string }
			}
		}
	}
}

const pageQuery = `query($after: String, $filter: ShipmentFilter) {
  shipments(first: 10, after: $after, filter: $filter, orderBy: { field: CREATED_AT, direction: DESC }) {
    totalCount pageInfo { endCursor startCursor }
    edges { node { id billOfLadingNumber containers { id number currentStatus } } }
  }
}`

func (p apiPage) rows() [][2]string {
	var out [][2]string
	for _, e := range p.Shipments.Edges {
		if len(e.Node.Containers) == 0 {
			out = append(out, [2]string{e.Node.BillOfLadingNumber, "No containers"})
		}
		for i, c := range e.Node.Containers {
			bl := ""
			if i == 0 {
				bl = e.Node.BillOfLadingNumber
			}
			out = append(out, [2]string{bl, c.Number})
		}
	}
	return out
}

func sameRows(t *testing.T, what string, page [][3]string, api [][2]string) {
	t.Helper()
	var got [][2]string
	for _, r := range page {
		got = append(got, [2]string{r[0], r[1]})
	}
	if fmt.Sprint(got) != fmt.Sprint(api) {
		t.Fatalf("%s: the table shows\n%v\nthe API answers\n%v", what, got, api)
	}
}

// TestBrowserOpsPage uses /ops as a person would, against a seeded server:
// key, tiles and table against the API's answers, pages, filters, a custom
// field saved (and refused for a viewer), a status changed with plain SQL
// showing in row and tile within a second, the WebSocket dropped and the
// subscription resumed, axe-core, a screenshot.
func TestBrowserOpsPage(t *testing.T) {
	base, db, keys, d := startOps(t)
	member := keys["acme member"]

	// A wrong key is refused in words, and the form stays.
	d.run(chromedp.Navigate(d.page))
	d.enterKey("sg_not_a_key")
	d.waitJS(`document.getElementById("alert").textContent.includes("(401)") && document.body.dataset.opsState === "key"`, 10*time.Second)

	// The member's key: the page comes up, live.
	start := time.Now()
	d.enterKey(member)
	d.waitJS(`document.body.dataset.opsState === "ready" && document.body.dataset.live === "live"`, 20*time.Second)
	t.Logf("key to live: %s", time.Since(start))
	var stored, href string
	d.eval(`sessionStorage.getItem("shipgraph.apiKey")`, &stored)
	d.eval(`location.href`, &href)
	if stored != member || strings.Contains(href, member) {
		t.Errorf("key in sessionStorage %q, URL %s", stored, href)
	}

	// Tiles and table agree with the API.
	if got, want := d.pageTiles(), apiTiles(t, base, member); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tiles %v, API %v", got, want)
	}
	var p1 apiPage
	gql(t, base, member, pageQuery, nil, &p1)
	sameRows(t, "page 1", d.rows(), p1.rows())
	var summary string
	d.eval(`document.getElementById("table-summary").textContent`, &summary)
	if !strings.Contains(summary, fmt.Sprintf("of %d shipments", p1.Shipments.TotalCount)) {
		t.Errorf("summary %q, API totalCount %d", summary, p1.Shipments.TotalCount)
	}

	// Page forward and back.
	var p2 apiPage
	gql(t, base, member, pageQuery, map[string]any{"after": p1.Shipments.PageInfo.EndCursor}, &p2)
	firstBL := func(p apiPage) string { return p.Shipments.Edges[0].Node.BillOfLadingNumber }
	d.run(chromedp.Click(`#next-page`, chromedp.ByID))
	d.waitJS(fmt.Sprintf(`document.querySelector("#shipments tbody th").textContent === %q`, firstBL(p2)), 10*time.Second)
	sameRows(t, "page 2", d.rows(), p2.rows())
	d.run(chromedp.Click(`#prev-page`, chromedp.ByID))
	d.waitJS(fmt.Sprintf(`document.querySelector("#shipments tbody th").textContent === %q`, firstBL(p1)), 10*time.Second)
	sameRows(t, "back to page 1", d.rows(), p1.rows())

	// Filter: by number, then by terminal, as the API filters.
	bl := p1.Shipments.Edges[2].Node.BillOfLadingNumber
	d.run(chromedp.SendKeys(`#f-search`, bl, chromedp.ByID), chromedp.Click(`#filters button[type=submit]`, chromedp.ByQuery))
	d.waitJS(fmt.Sprintf(`(() => { const th = Array.from(document.querySelectorAll("#shipments tbody tr.first th")); return th.length === 1 && th[0].textContent === %q; })()`, bl), 10*time.Second)
	var terminal string
	d.eval(`document.getElementById("f-terminal").options[1].value`, &terminal)
	d.setValue("f-search", "")
	d.setValue("f-terminal", terminal)
	d.run(chromedp.Click(`#filters button[type=submit]`, chromedp.ByQuery))
	var byTerminal apiPage
	gql(t, base, member, pageQuery, map[string]any{"filter": map[string]any{"podTerminalIds": []string{terminal}}}, &byTerminal)
	d.waitJS(fmt.Sprintf(`document.getElementById("table-summary").textContent.includes("of %d shipments")`, byTerminal.Shipments.TotalCount), 10*time.Second)
	sameRows(t, "filtered by terminal", d.rows(), byTerminal.rows())
	// Tags and an ETA range, with the terminal cleared.
	d.setValue("f-terminal", "")
	d.setValue("f-tags", "hazmat")
	from := time.Now().UTC().AddDate(0, 0, -7).Format(time.DateOnly)
	d.setValue("f-eta-from", from)
	d.run(chromedp.Click(`#filters button[type=submit]`, chromedp.ByQuery))
	var byTags apiPage
	gql(t, base, member, pageQuery, map[string]any{"filter": map[string]any{"tags": []string{"hazmat"}, "etaFrom": from + "T00:00:00Z"}}, &byTags)
	if byTags.Shipments.TotalCount == 0 || byTags.Shipments.TotalCount == p1.Shipments.TotalCount {
		t.Fatalf("tags and ETA: %d of %d shipments, a useless check", byTags.Shipments.TotalCount, p1.Shipments.TotalCount)
	}
	d.waitJS(fmt.Sprintf(`document.getElementById("table-summary").textContent.includes("of %d shipments")`, byTags.Shipments.TotalCount), 10*time.Second)
	sameRows(t, "filtered by tag and ETA", d.rows(), byTags.rows())
	d.run(chromedp.Click(`#filters button[type=reset]`, chromedp.ByQuery))
	d.waitJS(fmt.Sprintf(`document.querySelector("#shipments tbody th").textContent === %q && document.getElementById("table-summary").textContent.includes("of %d shipments")`,
		firstBL(p1), p1.Shipments.TotalCount), 10*time.Second)

	// By keyboard: Enter on a container opens its panel with the focus in
	// it, Escape closes it and gives the focus back.
	c0 := p1.Shipments.Edges[0].Node.Containers[0]
	opener := fmt.Sprintf(`tr[data-container-id=%q] button.container`, c0.ID)
	d.run(chromedp.Focus(opener, chromedp.ByQuery), chromedp.KeyEvent("\r"))
	d.waitJS(`!!document.getElementById("cf-container-yard_slot") && document.activeElement === document.getElementById("panel")`, 10*time.Second)
	d.run(chromedp.KeyEvent("\u001b"))
	d.waitJS(fmt.Sprintf(`document.getElementById("panel").hidden && document.activeElement === document.querySelector(%q)`, opener), 5*time.Second)

	// Edit a container's custom field: saved, in the database.
	d.run(chromedp.Click(opener, chromedp.ByQuery))
	d.waitJS(`!!document.getElementById("cf-container-yard_slot")`, 10*time.Second)
	d.setValue("cf-container-yard_slot", "")
	d.run(chromedp.SendKeys(`#cf-container-yard_slot`, "Row 7, slot 3", chromedp.ByID),
		chromedp.Click(`form[data-field="yard_slot"] button[type=submit]`, chromedp.ByQuery))
	d.waitJS(`document.getElementById("cf-container-yard_slot-msg").className === "msg saved"`, 10*time.Second)
	var saved string
	if err := db.QueryRow(`SELECT f.value #>> '{}' FROM custom_fields f JOIN custom_field_definitions d ON d.id = f.definition_id AND d.account_id = f.account_id
		WHERE f.container_id = $1 AND d.api_slug = 'yard_slot'`, c0.ID).Scan(&saved); err != nil || saved != "Row 7, slot 3" {
		t.Errorf("yard_slot in the database: %q, %v", saved, err)
	}

	// Accessibility of the page with the panel open, and the screenshot.
	d.axe()
	t.Logf("screenshot: %s", d.screenshot("ops.png"))
	d.run(chromedp.Click(`#panel-close`, chromedp.ByID))

	// Live: a status changed with plain SQL shows in the row and the tile
	// within a second, without a reload.
	d.eval(`window.__sameDocument = true`, nil)
	next := map[string]string{"GROUNDED": "AVAILABLE"}[c0.CurrentStatus]
	if next == "" {
		next = "GROUNDED"
	}
	words := map[string]string{"GROUNDED": "Grounded", "AVAILABLE": "Available"}
	before := apiTiles(t, base, member)
	if _, err := db.Exec(`UPDATE containers SET current_status = $1 WHERE id = $2`, strings.ToLower(next), c0.ID); err != nil {
		t.Fatal(err)
	}
	// The API's count moves by one (the response cache learns of the
	// change from the same log, so asking it now could race the page).
	var was int
	fmt.Sscan(before["status:"+next], &was)
	after := map[string]string{"status:" + next: fmt.Sprint(was + 1)}
	took := d.waitJS(fmt.Sprintf(`(() => {
  const td = document.querySelector('tr[data-container-id=%q] [data-col="status"]');
  const tile = document.querySelector('dd[data-tile="status:%s"]');
  return td && td.textContent === %q && td.dataset.changed && tile && tile.textContent === %q && window.__sameDocument; })()`,
		c0.ID, next, words[next], after["status:"+next]), time.Second)
	t.Logf("SQL commit to row and tile shown: %s", took)

	// Drop the page's connections (the WebSocket with them) and keep the
	// server unreachable while another change commits: on reconnect the
	// subscription resumes after the last log id and delivers it.
	var lastID string
	d.eval(`document.body.dataset.lastLogId`, &lastID)
	d.proxy.down()
	d.waitJS(`document.body.dataset.live === "reconnecting"`, 5*time.Second)
	c1 := p1.Shipments.Edges[1].Node.Containers[0]
	if _, err := db.Exec(`UPDATE containers SET current_status = 'off_dock' WHERE id = $1`, c1.ID); err != nil {
		t.Fatal(err)
	}
	d.proxy.up()
	d.waitJS(fmt.Sprintf(`(() => {
  const td = document.querySelector('tr[data-container-id=%q] [data-col="status"]');
  return td && td.textContent === "Off dock" && document.body.dataset.live === "live" && Number(document.body.dataset.liveConnects) >= 2
    && document.body.dataset.lastLogId !== %q && window.__sameDocument; })()`, c1.ID, lastID), 15*time.Second)

	// The re-reads go out with If-None-Match: by the second change, what
	// the changes left alone (this week's arrivals: shipments) is a 304.
	d.waitJS(`Number(document.body.dataset.notModified) > 0`, 5*time.Second)
	d.mu.Lock()
	if d.n304 == 0 {
		t.Errorf("the browser saw no 304")
	}
	d.mu.Unlock()

	if res := d.b.Observed(); len(res.Blocked) > 0 || len(res.ConsoleErrors) > 0 {
		// The refused key and the dropped connection log network errors
		// in the console; anything else is a bug.
		for _, e := range res.ConsoleErrors {
			// A 400 is never one of them: the server knows the page's
			// documents, so automatic persisted queries' first round
			// (the hash alone) is answered.
			if strings.Contains(e, "status of 400") || !strings.Contains(e, "ERR_CONNECTION") && !strings.Contains(e, "WebSocket") && !strings.Contains(e, "Failed to load resource") {
				t.Errorf("console: %s", e)
			}
		}
		if len(res.Blocked) > 0 {
			t.Errorf("non-loopback requests: %v", res.Blocked)
		}
	}

	// A viewer's edit: the page shows the API's refusal as the API words it.
	d.run(chromedp.Click(`#forget-key`, chromedp.ByID))
	d.enterKey(keys["acme viewer"])
	d.waitJS(`document.body.dataset.opsState === "ready"`, 20*time.Second)
	d.run(chromedp.Click(fmt.Sprintf(`tr[data-container-id=%q] button.container`, c0.ID), chromedp.ByQuery))
	d.waitJS(`!!document.getElementById("cf-container-yard_slot")`, 10*time.Second)
	d.setValue("cf-container-yard_slot", "viewer was here")
	d.run(chromedp.Click(`form[data-field="yard_slot"] button[type=submit]`, chromedp.ByQuery))
	d.waitJS(`document.getElementById("cf-container-yard_slot-msg").className === "msg error"`, 10*time.Second)
	var shown string
	d.eval(`document.getElementById("cf-container-yard_slot-msg").textContent`, &shown)
	refusal := gql(t, base, keys["acme viewer"], `mutation($id: ID!) { updateContainerCustomField(containerId: $id, apiSlug: "yard_slot", value: "x") { id } }`,
		map[string]any{"id": c0.ID}, nil)
	if len(refusal) != 1 || shown != refusal[0] {
		t.Errorf("the page shows %q, the API refuses with %q", shown, refusal)
	}
	if err := db.QueryRow(`SELECT f.value #>> '{}' FROM custom_fields f JOIN custom_field_definitions d ON d.id = f.definition_id AND d.account_id = f.account_id
		WHERE f.container_id = $1 AND d.api_slug = 'yard_slot'`, c0.ID).Scan(&saved); err != nil || saved != "Row 7, slot 3" {
		t.Errorf("yard_slot after the viewer's try: %q, %v", saved, err)
	}
}

// TestBrowserOpsTrustedOnly serves the page's own manifest (built by make
// ops into web/ops/dist) with GRAPHQL_TRUSTED_ONLY: the page works, live
// included, since it sends its operations by id; a document of its own is
// refused. A server that answers 429 is shown as such.
func TestBrowserOpsTrustedOnly(t *testing.T) {
	manifest := filepath.Join("web", "ops", "dist", "persisted-query-manifest.json")
	if _, err := os.Stat(manifest); err != nil {
		t.Fatalf("the page's manifest: %v (make ops writes it)", err)
	}
	url, base, keys := serveSeeded(t, "20", "--trusted-documents", manifest, "--trusted-only=true")
	if errs := gql(t, base, keys["acme member"], `{ viewer { role } }`, nil, nil); len(errs) != 1 || !strings.Contains(errs[0], "trusted documents only") {
		t.Fatalf("a document that is not the page's: %v", errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d := newOpsDriver(t, ctx, base)
	d.run(chromedp.Navigate(d.page))
	d.enterKey(keys["acme member"])
	d.waitJS(`document.body.dataset.opsState === "ready" && document.body.dataset.live === "live" && document.querySelectorAll("#shipments tbody tr").length > 0`, 20*time.Second)
	if got, want := d.pageTiles(), apiTiles(t, serve(t, "--database-url", url), keys["acme member"]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tiles %v, API %v", got, want)
	}
	var alert string
	d.eval(`document.getElementById("alert").textContent`, &alert)
	if alert != "" {
		t.Errorf("alert: %s", alert)
	}

	// 429: a rate limit of 20 a minute (bursts of 2) refuses the page's
	// first reads; it says so and that it retries.
	limited := serve(t, "--database-url", url, "--rate-limit", "20")
	d2 := newOpsDriver(t, ctx, limited)
	d2.run(chromedp.Navigate(d2.page))
	d2.enterKey(keys["acme viewer"])
	d2.waitJS(`document.getElementById("alert").textContent.includes("Too many requests (429)") && document.getElementById("alert").textContent.includes("retries")`, 20*time.Second)
}

// TestBrowserOpsUnavailable stops the database under an open page: its next
// read says the service is unavailable (503) and retries by itself, and
// once the database is back the page carries on without a reload.
func TestBrowserOpsUnavailable(t *testing.T) {
	pg := dbtest.NewServer(t)
	keys := seedKeys(t, pg.URL(), "30")
	base := serve(t, "--database-url", pg.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d := newOpsDriver(t, ctx, base)
	d.run(chromedp.Navigate(d.page))
	d.enterKey(keys["acme member"])
	d.waitJS(`document.body.dataset.opsState === "ready" && !document.getElementById("next-page").disabled`, 20*time.Second)
	d.eval(`window.__sameDocument = true`, nil)

	pg.Stop(t)
	d.run(chromedp.Click(`#next-page`, chromedp.ByID))
	d.waitJS(`document.getElementById("alert").textContent.includes("(503)") && document.getElementById("alert").textContent.includes("Retrying in")`, 30*time.Second)
	var alert string
	d.eval(`document.getElementById("alert").textContent`, &alert)
	t.Logf("the page says: %s", alert)
	pg.Start(t)
	d.waitJS(`document.getElementById("table-summary").textContent.startsWith("Page 2:") && document.getElementById("alert").hidden && window.__sameDocument`, 30*time.Second)
}

// axe runs axe-core (npm, pinned) in the page: no serious or critical
// violation.
func (d *opsDriver) axe() {
	d.t.Helper()
	needNPM(d.t, "axe-core")
	dir := d.t.TempDir()
	out, err := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", "axe-core@"+axeCoreVersion).CombinedOutput()
	if err != nil {
		d.t.Fatalf("npm install axe-core: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		d.t.Fatal(err)
	}
	d.run(chromedp.Evaluate(string(src), nil))
	var violations []struct {
		ID, Impact, Help string
		Nodes            []struct{ Target []string }
	}
	d.eval(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`, &violations)
	for _, v := range violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			d.t.Errorf("axe %s (%s): %s at %v", v.ID, v.Impact, v.Help, v.Nodes)
		} else {
			d.t.Logf("axe %s (%s): %s", v.ID, v.Impact, v.Help)
		}
	}
}

// dropProxy forwards TCP connections to the server until down closes them
// all and refuses new ones (accepts and closes at once), until up.
type dropProxy struct {
	addr    string
	target  string
	mu      sync.Mutex
	isDown  bool
	conns   map[net.Conn]struct{}
	ln      net.Listener
	dropped int
}

func newDropProxy(t *testing.T, target string) *dropProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}, ln: ln}
	t.Cleanup(func() { ln.Close(); p.down() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *dropProxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.isDown {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); s.Close() }()
	_, _ = io.Copy(c, s)
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// down closes every forwarded connection and refuses new ones.
func (p *dropProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDown = true
	for c := range p.conns {
		c.Close()
		p.dropped++
	}
}

func (p *dropProxy) up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDown = false
}

// TestBrowserOpsMeasure measures the page on the seeded demo with demo
// activity (make run's): bundle size, first render and live-ready of a
// load with the key in the tab, requests and bytes per minute of the open
// page, and the tab's JS heap (after a forced GC) over OPS_MEASURE (e.g.
// 45m) with its slope. A measurement, not a check: it runs only when
// OPS_MEASURE is set, and writes artifacts/ops-measure.json and
// ops-heap.csv.
func TestBrowserOpsMeasure(t *testing.T) {
	span, err := time.ParseDuration(os.Getenv("OPS_MEASURE"))
	if err != nil || span < 2*time.Minute {
		t.Skip("set OPS_MEASURE to a duration of at least 2m to measure the page")
	}
	url := dbtest.NewDB(t)
	keys := seedKeys(t, url, "200")
	activity := os.Getenv("OPS_DEMO_ACTIVITY")
	if activity == "" {
		activity = "4s"
	}
	base := serve(t, "--database-url", url, "--demo-activity", activity)
	ctx, cancel := context.WithTimeout(context.Background(), span+10*time.Minute)
	defer cancel()
	d := newOpsDriver(t, ctx, base)
	report := map[string]any{"demoActivity": activity}

	d.run(chromedp.Navigate(d.page))
	d.enterKey(keys["acme admin"])
	d.waitJS(`document.body.dataset.opsState === "ready" && document.body.dataset.live === "live"`, 30*time.Second)

	// First render and live-ready of loads with the key in the tab.
	var firsts, lives []float64
	for range 7 {
		d.run(chromedp.Reload())
		d.waitJS(`document.body.dataset.opsState === "ready" && document.body.dataset.live === "live"`, 30*time.Second)
		var m struct{ First, Live float64 }
		d.eval(`({ first: performance.getEntriesByName("ops-first-render")[0].startTime, live: performance.getEntriesByName("ops-live-ready")[0].startTime })`, &m)
		firsts, lives = append(firsts, m.First), append(lives, m.Live)
	}
	report["firstRenderMs"], report["liveReadyMs"] = firsts, lives
	t.Logf("first render ms %v, live-ready ms %v", firsts, lives)

	// Requests and bytes a minute of the open page.
	d.mu.Lock()
	r0, n0, b0 := d.requests, d.n304, d.bytes
	d.mu.Unlock()
	var e0 float64
	d.eval(`Number(document.body.dataset.events || 0)`, &e0)
	minute := time.NewTimer(time.Minute)
	<-minute.C
	d.mu.Lock()
	perMin := map[string]any{"requests": d.requests - r0, "notModified": d.n304 - n0, "bytes": d.bytes - b0}
	d.mu.Unlock()
	var e1 float64
	d.eval(`Number(document.body.dataset.events || 0)`, &e1)
	perMin["events"] = e1 - e0
	report["perMinute"] = perMin
	t.Logf("a minute of the open page: %v", perMin)

	// The heap over the rest of the span, sampled each 30 s after a GC.
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = "artifacts"
	}
	_ = os.MkdirAll(dir, 0o755)
	var csv strings.Builder
	csv.WriteString("seconds,js_heap_used_bytes,dom_nodes,events\n")
	type sample struct{ s, heap float64 }
	var samples []sample
	begin := time.Now()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		var heap float64
		var nodes, events float64
		d.run(chromedp.ActionFunc(func(ctx context.Context) error {
			if err := heapprofiler.CollectGarbage().Do(ctx); err != nil {
				return err
			}
			used, _, _, _, err := runtime.GetHeapUsage().Do(ctx)
			heap = used
			return err
		}))
		d.eval(`document.getElementsByTagName("*").length`, &nodes)
		d.eval(`Number(document.body.dataset.events || 0)`, &events)
		s := time.Since(begin).Seconds()
		samples = append(samples, sample{s, heap})
		fmt.Fprintf(&csv, "%.0f,%.0f,%.0f,%.0f\n", s, heap, nodes, events)
		_ = os.WriteFile(filepath.Join(dir, "ops-heap.csv"), []byte(csv.String()), 0o644)
		if time.Since(begin) >= span-time.Minute {
			break
		}
		<-tick.C
	}
	// Least-squares slope, bytes a minute.
	var n, sx, sy, sxx, sxy float64
	for _, p := range samples {
		n++
		sx += p.s
		sy += p.heap
		sxx += p.s * p.s
		sxy += p.s * p.heap
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx) * 60
	report["heap"] = map[string]any{"samples": len(samples), "firstBytes": samples[0].heap, "lastBytes": samples[len(samples)-1].heap,
		"minutes": samples[len(samples)-1].s / 60, "slopeBytesPerMinute": slope}
	var events float64
	d.eval(`Number(document.body.dataset.events || 0)`, &events)
	report["eventsTotal"] = events
	out, _ := json.MarshalIndent(report, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, "ops-measure.json"), out, 0o644)
	t.Logf("%s", out)
}

// startOps serves a database seeded with 60 shipments and opens /ops in a
// browser driver (four minutes at most): the server's URL, the database
// for plain SQL, the seeded keys and the driver.
func startOps(t *testing.T) (base string, db *sql.DB, keys map[string]string, d *opsDriver) {
	t.Helper()
	url, base, keys := serveSeeded(t, "60")
	db = dbtest.Open(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return base, db, keys, newOpsDriver(t, ctx, base)
}
