//go:build browser

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// viewportShot saves what the window shows (not the whole page): the
// layout check of a size is what is visible without scrolling.
func (d *opsDriver) viewportShot(name string) {
	d.t.Helper()
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = "artifacts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.t.Fatal(err)
	}
	var png []byte
	d.run(chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		d.t.Fatal(err)
	}
}

type mapMarker struct {
	ID, Lat, Lon, Where, State string
}

func (d *opsDriver) markers() []mapMarker {
	var out []mapMarker
	d.eval(`Array.from(document.querySelectorAll("#map [data-marker]")).map((g) => ({ id: g.dataset.id, lat: g.dataset.lat, lon: g.dataset.lon, where: g.dataset.where, state: g.dataset.state }))`, &out)
	return out
}

// TestBrowserOpsMap checks the map, the panel's journey and the layout:
// one marker per container not yet picked up (the API's totalCount), a
// transport event inserted with plain SQL moving its marker without a
// reload, the panel's route map with the legs of the container's
// map_geojson and its milestones in plain words, opened by keyboard; the
// header's controls never covered; no horizontal scrolling at 200% zoom;
// screenshots at 1366×768 and 1920×1080; axe-core; no console error.
func TestBrowserOpsMap(t *testing.T) {
	base, db, keys, d := startOps(t)
	member := keys["acme member"]

	d.run(chromedp.EmulateViewport(1366, 768), chromedp.Navigate(d.page))
	d.enterKey(member)
	d.waitJS(`document.body.dataset.opsState === "ready" && document.body.dataset.live === "live" && document.body.dataset.mapTotal !== undefined`, 30*time.Second)

	// One marker per container not yet picked up, as the API counts them.
	var api struct {
		Containers struct{ TotalCount int }
	}
	if errs := gql(t, base, member, `{ containers(filter: { statuses: [NEW, ON_SHIP, AVAILABLE, NOT_AVAILABLE, GROUNDED] }) { totalCount } }`, nil, &api); len(errs) > 0 {
		t.Fatal(errs)
	}
	ms := d.markers()
	if api.Containers.TotalCount < 10 || len(ms) != api.Containers.TotalCount {
		t.Fatalf("%d markers, the API counts %d containers not yet picked up", len(ms), api.Containers.TotalCount)
	}
	states := map[string]int{}
	for _, m := range ms {
		states[m.State]++
	}
	var legend map[string]string
	d.eval(`Object.fromEntries(Array.from(document.querySelectorAll("#map-legend [data-count]")).map((e) => [e.dataset.count, e.textContent]))`, &legend)
	for _, st := range []string{"ontime", "late", "holds", "lfd"} {
		if legend[st] != fmt.Sprint(states[st]) {
			t.Errorf("legend %s says %q, %d markers are", st, legend[st], states[st])
		}
	}
	if states["ontime"] == len(ms) {
		t.Errorf("every marker is on time: the colours say nothing (%v)", states)
	}
	t.Logf("markers by state: %v", states)

	// The arrivals chart shows the API's counts, day by day (UTC days).
	today := time.Now().UTC().Truncate(24 * time.Hour)
	var bars [][2]string
	d.eval(`Array.from(document.querySelectorAll("#chart-arrivals rect")).map((r) => [r.dataset.day, r.dataset.count])`, &bars)
	if len(bars) != 14 {
		t.Fatalf("%d bars, want 14", len(bars))
	}
	total := 0
	for i, b := range bars {
		from := today.AddDate(0, 0, i)
		var g struct {
			S []struct{ Count int }
		}
		if errs := gql(t, base, member, `query($a: DateTime!, $b: DateTime!) { s: shipmentStats(filter: { etaFrom: $a, etaTo: $b }, groupBy: [PORT_OF_DISCHARGE]) { count } }`,
			map[string]any{"a": from.Format(time.RFC3339), "b": from.AddDate(0, 0, 1).Format(time.RFC3339)}, &g); len(errs) > 0 {
			t.Fatal(errs)
		}
		n := 0
		for _, x := range g.S {
			n += x.Count
		}
		total += n
		if b[0] != from.Format(time.DateOnly) || b[1] != fmt.Sprint(n) {
			t.Errorf("bar %d: %v, the API counts %d on %s", i, b, n, from.Format(time.DateOnly))
		}
	}
	if total == 0 {
		t.Error("no arrivals in the next 14 days: the chart check proves nothing")
	}

	// The status trend shows the API's history, day by day and status by
	// status.
	trendFrom := today.AddDate(0, 0, -29)
	if chart, api := statusBars(d), statusHistory(t, base, member, trendFrom); chart != api {
		t.Errorf("status chart %s\nthe API says %s", chart, api)
	} else if !strings.Contains(chart, "ON_SHIP") {
		t.Errorf("no container on a ship in 30 days: the trend check proves little: %s", chart)
	}

	// Layout at 1366×768: map and table start within the window.
	var layout struct{ MapBottom, TableTop, Height float64 }
	d.eval(`({ mapBottom: document.getElementById("map").getBoundingClientRect().bottom, tableTop: document.getElementById("shipments").getBoundingClientRect().top, height: innerHeight })`, &layout)
	if layout.MapBottom > layout.Height || layout.TableTop > layout.Height-40 {
		t.Errorf("at 1366×768 the map ends at %.0f and the table starts at %.0f of %.0f px", layout.MapBottom, layout.TableTop, layout.Height)
	}
	d.viewportShot("ops-1366x768.png")

	// A transport event inserted with plain SQL moves its marker, live:
	// a container at sea (or, failing that, anywhere but its port of
	// discharge) arrives at its port of discharge.
	var pick mapMarker
	var podLat, podLon string
	for _, where := range []string{"sea", "port"} {
		for _, m := range ms {
			if m.Where != where {
				continue
			}
			var c struct {
				Container struct {
					Shipment struct {
						PortOfDischarge *struct{ Latitude, Longitude *float64 }
					}
				}
			}
			gql(t, base, member, `query($id: ID!) { container(id: $id) { shipment { portOfDischarge { latitude longitude } } } }`, map[string]any{"id": m.ID}, &c)
			p := c.Container.Shipment.PortOfDischarge
			if p == nil || p.Latitude == nil || p.Longitude == nil {
				continue
			}
			lat, lon := fmt.Sprintf("%.4f", *p.Latitude), fmt.Sprintf("%.4f", *p.Longitude)
			if lat != m.Lat || lon != m.Lon {
				pick, podLat, podLon = m, lat, lon
				break
			}
		}
		if pick.ID != "" {
			break
		}
	}
	if pick.ID == "" {
		t.Fatal("no marker away from its port of discharge to move")
	}
	d.eval(`window.__sameDocument = true`, nil)
	if _, err := db.Exec(`INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at,
		timezone, location_locode, port_id, data_source)
		SELECT c.account_id, c.id, s.id, s.shipping_line_scac, 'TEST-ARRIVED', 'container.transport.vessel_arrived', now() - interval '1 minute',
		       s.pod_timezone, p.code, p.id, 'shipping_line'
		FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
		JOIN ports p ON p.id = s.port_of_discharge_id WHERE c.id = $1`, pick.ID); err != nil {
		t.Fatal(err)
	}
	sel := fmt.Sprintf(`document.querySelector('#map [data-id=%q]')`, pick.ID)
	took := d.waitJS(fmt.Sprintf(`%s.dataset.lat === %q && %s.dataset.lon === %q && %s.dataset.where === "port" && window.__sameDocument`, sel, podLat, sel, podLon, sel), 15*time.Second)
	t.Logf("marker %s moved from %s,%s (%s) to its port of discharge %s,%s in %s, no reload", pick.ID, pick.Lat, pick.Lon, pick.Where, podLat, podLon, took)
	if n := len(d.markers()); n != len(ms) {
		t.Errorf("%d markers after the move, %d before", n, len(ms))
	}

	// The panel by keyboard: the marker focused, Enter.
	d.eval(sel+`.focus()`, nil)
	d.run(chromedp.KeyEvent("\r"))
	d.waitJS(`document.activeElement === document.getElementById("panel") && !!document.querySelector("#route-map svg")`, 15*time.Second)
	// Its route has the legs of the container's map_geojson.
	var fc struct {
		Features []struct {
			Geometry   struct{ Type string }
			Properties struct {
				FeatureType string `json:"feature_type"`
			}
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/v2/containers/"+pick.ID+"/map_geojson", nil)
	req.Header.Set("Authorization", "Token "+member)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if err := json.Unmarshal(raw, &fc); err != nil {
		t.Fatalf("%d %s", res.StatusCode, raw)
	}
	var wantLegs []string
	for _, f := range fc.Features {
		if f.Geometry.Type == "LineString" {
			wantLegs = append(wantLegs, f.Properties.FeatureType)
		}
	}
	var legs []string
	d.eval(`Array.from(document.querySelectorAll("#route-map [data-leg]")).map((e) => e.dataset.leg)`, &legs)
	if len(wantLegs) == 0 || fmt.Sprint(legs) != fmt.Sprint(wantLegs) {
		t.Errorf("route map legs %v, map_geojson %v", legs, wantLegs)
	}
	// Milestones in plain words; the new arrival among them.
	var items []string
	d.eval(`Array.from(document.querySelectorAll("#panel .timeline li .what")).map((e) => e.textContent)`, &items)
	joined := strings.Join(items, "\n")
	if !strings.Contains(joined, "Vessel arrived at ") || strings.Contains(joined, "container.") || strings.Contains(joined, "estimated.") || strings.Contains(joined, "_") {
		t.Errorf("milestones:\n%s", joined)
	}
	// The header's controls stay uncovered: Forget key is what is under its centre.
	var uncovered bool
	d.eval(`(() => { const b = document.getElementById("forget-key").getBoundingClientRect(); const e = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2); return e === document.getElementById("forget-key") && document.getElementById("panel").getBoundingClientRect().top >= document.querySelector("header.top").getBoundingClientRect().bottom - 1; })()`, &uncovered)
	if !uncovered {
		var dbg string
		d.eval(`JSON.stringify({ b: document.getElementById("forget-key").getBoundingClientRect(), h: document.querySelector("header.top").getBoundingClientRect(), p: document.getElementById("panel").getBoundingClientRect(), hit: (() => { const b = document.getElementById("forget-key").getBoundingClientRect(); const e = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2); return e && (e.id || e.tagName); })() })`, &dbg)
		t.Errorf("the panel covers the header's Forget key: %s", dbg)
	}
	d.viewportShot("ops-1366x768-panel.png")
	d.axe()
	d.run(chromedp.KeyEvent(kb.Escape))
	d.waitJS(fmt.Sprintf(`document.getElementById("panel").hidden && document.activeElement === %s`, sel), 5*time.Second)

	// 1920×1080, and 200% zoom of 1366×768 (a 683×384 CSS-pixel window):
	// nothing wider than the window.
	d.run(chromedp.EmulateViewport(1920, 1080))
	d.waitJS(`document.getElementById("map").getBoundingClientRect().width > 1000`, 5*time.Second)
	d.viewportShot("ops-1920x1080.png")
	d.run(chromedp.EmulateViewport(683, 384, chromedp.EmulateScale(2)))
	d.waitJS(`document.documentElement.scrollWidth <= innerWidth`, 5*time.Second)
	d.viewportShot("ops-zoom200.png")
	d.run(chromedp.EmulateViewport(1366, 768))

	// A pick-up inserted with plain SQL moves today's bar of the status
	// trend, live: the container counts as picked up today.
	d.run(chromedp.EmulateViewport(1366, 768))
	todayKey := today.Format(time.DateOnly)
	pickedBefore := statusCount(d, todayKey, "PICKED_UP")
	if _, err := db.Exec(`INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at,
		timezone, data_source)
		SELECT c.account_id, c.id, c.shipment_id, s.shipping_line_scac, 'TEST-OUT', 'container.transport.full_out', now() - interval '30 seconds',
		       s.pod_timezone, 'terminal'
		FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id WHERE c.id = $1`, pick.ID); err != nil {
		t.Fatal(err)
	}
	took = d.waitJS(fmt.Sprintf(`(document.querySelector('#chart-status rect[data-day=%q][data-status="PICKED_UP"]')?.dataset.count ?? "0") === "%d"`, todayKey, pickedBefore+1), 15*time.Second)
	t.Logf("today's picked-up bar went %d → %d in %s, no reload", pickedBefore, pickedBefore+1, took)
	if chart, api := statusBars(d), statusHistory(t, base, member, trendFrom); chart != api {
		t.Errorf("after the pick-up, status chart %s\nthe API says %s", chart, api)
	}

	// First render with the key in the tab (a reload), for docs/ops.md.
	d.run(chromedp.Reload())
	d.waitJS(`document.body.dataset.opsState === "ready" && document.body.dataset.mapTotal !== undefined`, 30*time.Second)
	var first float64
	d.eval(`performance.getEntriesByName("ops-first-render")[0].startTime`, &first)
	t.Logf("first render after a reload (tiles, table and map): %.0f ms", first)

	res = nil
	obs := d.b.Observed()
	if len(obs.Blocked) > 0 {
		t.Errorf("non-loopback requests: %v", obs.Blocked)
	}
	// None expected: the server knows the page's documents (web/ops's
	// embedded manifest) without GRAPHQL_TRUSTED_DOCUMENTS, so even the
	// first round of automatic persisted queries is answered.
	for _, e := range obs.ConsoleErrors {
		t.Errorf("console: %s", e)
	}
}

// statusBars is the status trend chart's bars as "day status=count …" lines.
func statusBars(d *opsDriver) string {
	var bars [][3]string
	d.eval(`Array.from(document.querySelectorAll("#chart-status rect")).map((r) => [r.dataset.day, r.dataset.status, r.dataset.count])`, &bars)
	byDay := map[string][]string{}
	for _, b := range bars {
		byDay[b[0]] = append(byDay[b[0]], b[1]+"="+b[2])
	}
	return joinDays(byDay)
}

// statusCount is one bar's count (0 when it is not drawn).
func statusCount(d *opsDriver, day, status string) int {
	var n int
	d.eval(fmt.Sprintf(`Number(document.querySelector('#chart-status rect[data-day=%q][data-status=%q]')?.dataset.count ?? 0)`, day, status), &n)
	return n
}

// statusHistory is the API's containerStatusHistory from from, 30 days, in
// statusBars's form.
func statusHistory(t *testing.T, base, key string, from time.Time) string {
	t.Helper()
	var h struct {
		H []struct {
			Day    time.Time
			Counts []struct {
				Status string
				Count  int
			}
		}
	}
	if errs := gql(t, base, key, `query($f: DateTime!) { h: containerStatusHistory(from: $f, days: 30) { day counts { status count } } }`,
		map[string]any{"f": from.Format(time.RFC3339)}, &h); len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(h.H) != 30 {
		t.Fatalf("the API's history has %d days, want 30", len(h.H))
	}
	byDay := map[string][]string{}
	for _, d := range h.H {
		for _, c := range d.Counts {
			if c.Count > 0 {
				day := d.Day.UTC().Format(time.DateOnly)
				byDay[day] = append(byDay[day], fmt.Sprintf("%s=%d", c.Status, c.Count))
			}
		}
	}
	return joinDays(byDay)
}

func joinDays(byDay map[string][]string) string {
	days := make([]string, 0, len(byDay))
	for d := range byDay {
		days = append(days, d)
	}
	sort.Strings(days)
	var b strings.Builder
	for _, d := range days {
		fmt.Fprintf(&b, "\n%s %s", d, strings.Join(byDay[d], " "))
	}
	return b.String()
}
