// The operations page: tiles, the shipments table with its containers, the
// container panel and live updates, on the public GraphQL API only.
import { ApiError, describe, getJSON, mutate, query, setKey, traffic } from "./api";
import { Live, type ChangeEvent, type LiveState } from "./live";
import { routeMap, timeline, type JourneyEvent, type RouteGeoJSON } from "./journey";
import { ContainerMap, stateWords, type MapContainer, type MarkState } from "./map";

const KEY = "shipgraph.apiKey";
const PAGE_SIZE = 10;

// ---------------------------------------------------------------- types of the answers

interface Terminal { id: string; name: string }
interface Hold { name: string; status: string; description?: string | null }
interface RowContainer { id: string; number: string; currentStatus: string; pickupLfd: string | null; availableForPickup: boolean | null; holdsAtPodTerminal: Hold[] }
interface Shipment {
  id: string; billOfLadingNumber: string; shippingLineScac: string; shippingLineShortName: string; portOfDischargeName: string | null;
  podEtaAt: string | null; podTimezone: string | null; tags: string[]; podTerminal: Terminal | null; containers: RowContainer[];
}
interface ShipmentsAnswer {
  shipments: { totalCount: number; pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }; edges: { cursor: string; node: Shipment }[] };
}
interface Group { portOfDischarge?: { id: string; name: string } | null; status?: string | null; lastFreeDay?: string | null; etaWeek?: string | null; podTerminal?: Terminal | null; count: number }
interface TilesAnswer { byStatus: Group[]; byLastFreeDay: Group[]; holds: Group[] }
interface FieldValue { id: string; apiSlug: string; value: unknown; displayValue: string | null }
interface FieldDef { id: string; apiSlug: string; displayName: string; dataType: string; options: { value: string; label: string }[] }

// ---------------------------------------------------------------- page state

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const body = document.body;
const state = {
  key: "",
  role: "",
  filter: {} as Record<string, unknown>,
  orderBy: { field: "CREATED_AT", direction: "DESC" },
  cursor: { first: PAGE_SIZE } as Record<string, unknown>,
  page: 1,
  pageInfo: null as ShipmentsAnswer["shipments"]["pageInfo"] | null,
  visibleShipments: new Set<string>(),
  visibleContainers: new Set<string>(),
  panel: null as null | { containerId: string; shipmentId: string; opener: HTMLElement | null },
  live: null as Live | null,
  retryTimer: 0,
  firstRender: false,
  map: null as ContainerMap | null,
};

function setData(name: string, value: string | number): void {
  body.dataset[name] = String(value);
}

function countTraffic(): void {
  setData("requests", traffic.requests);
  setData("notModified", traffic.notModified);
}

// ---------------------------------------------------------------- alerts and errors

function showAlert(text: string): void {
  const a = $("alert");
  a.textContent = text;
  a.hidden = !text;
}

/** fail shows e; auth failures bring the key form back, 429/503/network retry. */
function fail(e: unknown, retry?: () => void): void {
  showAlert(describe(e));
  if (e instanceof ApiError) {
    if (e.status === 401) {
      forgetKey(false);
      showAlert(describe(e));
      return;
    }
    if (retry && (e.status === 429 || e.status === 503 || e.status === 0)) {
      clearTimeout(state.retryTimer);
      state.retryTimer = window.setTimeout(() => {
        showAlert("");
        retry();
      }, e.retryAfter * 1000);
    }
  }
}

// ---------------------------------------------------------------- formatting

function day(iso: string | null, tz?: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  try {
    return new Intl.DateTimeFormat("en-CA", { timeZone: tz || "UTC", year: "numeric", month: "2-digit", day: "2-digit" }).format(d);
  } catch {
    return iso.slice(0, 10);
  }
}

function when(iso: string | null, tz?: string | null): string {
  if (!iso) return "";
  try {
    return new Intl.DateTimeFormat("en-GB", { timeZone: tz || "UTC", dateStyle: "medium", timeStyle: "short" }).format(new Date(iso)) + (tz ? ` (${tz})` : " UTC");
  } catch {
    return iso;
  }
}

const statusWords: Record<string, string> = {
  NEW: "New", ON_SHIP: "On ship", AVAILABLE: "Available", NOT_AVAILABLE: "Not available", GROUNDED: "Grounded",
  ON_RAIL: "On rail", PICKED_UP: "Picked up", OFF_DOCK: "Off dock", DELIVERED: "Delivered", EMPTY_RETURNED: "Empty returned",
  DROPPED: "Dropped", LOADED: "Loaded", AWAITING_INLAND_TRANSFER: "Awaiting inland transfer",
};
const status = (s: string | null | undefined) => (s ? statusWords[s] ?? s.replace(/_/g, " ").toLowerCase() : "Unknown");

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

/** mark flags an element a live update changed, for a few seconds. */
function mark(e: HTMLElement): void {
  e.dataset.changed = String(Date.now());
  const stamp = e.dataset.changed;
  window.setTimeout(() => {
    if (e.dataset.changed === stamp) delete e.dataset.changed;
  }, 6000);
}

/** put sets e's text, marking it when it changed and marks are wanted. */
function put(e: HTMLElement, text: string, marks: boolean): boolean {
  if (e.textContent === text) return false;
  e.textContent = text;
  if (marks) mark(e);
  return true;
}

// ---------------------------------------------------------------- tiles

function monday(now = new Date()): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

interface TileEntry { key: string; label: string; value: number }

/** tile renders one tile's entries in place: existing ones keep their node. */
function tile(id: string, title: string, entries: TileEntry[], marks: boolean, empty: string): void {
  const host = $("tiles");
  let t = document.getElementById(id);
  if (!t) {
    t = el("section", { id, class: "tile", "aria-labelledby": id + "-h" }, el("h3", { id: id + "-h" }, title), el("dl"));
    host.append(t);
  }
  const dl = t.querySelector("dl")!;
  const seen = new Set<string>();
  let prev: Element | null = null;
  for (const en of entries.length ? entries : [{ key: id + ":none", label: empty, value: 0 }]) {
    seen.add(en.key);
    let dd = dl.querySelector<HTMLElement>(`dd[data-tile="${CSS.escape(en.key)}"]`);
    let dt: HTMLElement;
    if (!dd) {
      dt = el("dt", {}, en.label);
      dd = el("dd", { "data-tile": en.key }, String(en.value));
      if (marks) mark(dd);
    } else {
      dt = dd.previousElementSibling as HTMLElement;
      put(dt, en.label, false);
      put(dd, String(en.value), marks);
    }
    // Keep the order of entries.
    if (prev) prev.after(dt, dd);
    else dl.prepend(dt, dd);
    prev = dd;
  }
  for (const dd of Array.from(dl.querySelectorAll<HTMLElement>("dd[data-tile]"))) {
    if (!seen.has(dd.dataset.tile!)) {
      dd.previousElementSibling?.remove();
      dd.remove();
    }
  }
}

/** TOP_PORTS is how many ports the arrivals tile names; the rest are summed. */
const TOP_PORTS = 4;

type ArrivalsAnswer = { arrivals: Group[] } & Record<string, Group[]>;
interface HistoryAnswer { history: { day: string; counts: { status: string; count: number }[] }[] }

async function loadTiles(marks: boolean): Promise<void> {
  const week = monday();
  const to = new Date(Date.parse(week + "T00:00:00Z") + 7 * 86400e3).toISOString();
  const today = Date.parse(new Date().toISOString().slice(0, 10) + "T00:00:00Z");
  const days: Record<string, string> = {};
  for (let i = 0; i <= 14; i++) days[`d${i}`] = new Date(today + i * 86400e3).toISOString();
  const [{ data, fresh }, arr, hist] = await Promise.all([
    query<TilesAnswer>("OpsTiles"),
    query<ArrivalsAnswer>("OpsArrivals", { from: week + "T00:00:00Z", to, ...days }),
    query<HistoryAnswer>("OpsStatusHistory", { from: new Date(today - 29 * 86400e3).toISOString() }),
  ]);
  countTraffic();
  if (fresh || !document.getElementById("tile-status")) containerTiles(data, marks);
  if (arr.fresh || !document.getElementById("tile-arrivals")) {
    // The busiest ports by name, the others as one line: a glance, not a list.
    const byPort = arr.data.arrivals.slice().sort((a, b) => b.count - a.count || (a.portOfDischarge?.name ?? "~").localeCompare(b.portOfDischarge?.name ?? "~"));
    const entries = byPort.slice(0, TOP_PORTS).map((g) => ({ key: `arrivals:${g.portOfDischarge?.id ?? "unknown"}`, label: g.portOfDischarge?.name ?? "Port not known", value: g.count }));
    const rest = byPort.slice(TOP_PORTS);
    if (rest.length) entries.push({ key: "arrivals:other", label: `${rest.length} other port${rest.length === 1 ? "" : "s"}`, value: rest.reduce((n, g) => n + g.count, 0) });
    tile("tile-arrivals", `Shipments arriving this week (from ${week}), by port`, entries, marks, "None this week");
    const perDay = Array.from({ length: 14 }, (_, i) => ({
      day: days[`d${i}`].slice(0, 10),
      count: (arr.data[`day${i}`] ?? []).reduce((n, g) => n + g.count, 0),
    }));
    const from = new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", day: "numeric", month: "short" }).format(new Date(today));
    put($("chart-arrivals-title"), `Shipments arriving per day, next 14 days (from today, ${from}; UTC days)`, false);
    barChart($("chart-arrivals"), perDay, "Shipments arriving per day, next 14 days");
  }
  if (hist.fresh || !$("chart-status").firstChild) {
    statusChart($("chart-status"), $("chart-status-legend"), hist.data.history, "Containers by status at the end of each day, last 30 days");
  }
}

/** statusChart draws the containers of each day stacked by status, oldest
 * day first, with a legend and a table for screen readers. */
function statusChart(host: HTMLElement, legend: HTMLElement, days: HistoryAnswer["history"], title: string): void {
  const W = 780, H = 66, top = 2, bottom = 15;
  const totals = days.map((d) => d.counts.reduce((n, c) => n + c.count, 0));
  const max = Math.max(1, ...totals);
  const bw = W / Math.max(1, days.length);
  const ns = "http://www.w3.org/2000/svg";
  const s = document.createElementNS(ns, "svg");
  s.setAttribute("viewBox", `0 0 ${W} ${H}`);
  s.setAttribute("aria-hidden", "true");
  const statuses = days.length ? days[0].counts.map((c) => c.status) : [];
  days.forEach((d, i) => {
    let y = H - bottom;
    for (const c of d.counts) {
      const h = ((H - top - bottom) * c.count) / max;
      y -= h;
      if (!c.count) continue;
      const r = document.createElementNS(ns, "rect");
      r.setAttribute("x", (i * bw + 1).toFixed(1));
      r.setAttribute("y", y.toFixed(1));
      r.setAttribute("width", Math.max(1, bw - 2).toFixed(1));
      r.setAttribute("height", h.toFixed(1));
      r.setAttribute("data-status", c.status);
      r.setAttribute("data-day", d.day.slice(0, 10));
      r.setAttribute("data-count", String(c.count));
      s.append(r);
    }
    if (i % 7 === days.length % 7 - 1 || i === days.length - 1) {
      const l = document.createElementNS(ns, "text");
      l.setAttribute("x", (i * bw + bw / 2).toFixed(1));
      l.setAttribute("y", String(H - 5));
      l.textContent = String(Number(d.day.slice(8, 10)));
      if (i === days.length - 1) l.setAttribute("class", "today");
      s.append(l);
    }
  });
  legend.replaceChildren(...statuses.map((st) => el("li", { "data-status": st }, el("span", { class: "swatch" }), status(st))));
  const table = el("table", { class: "sr-only" }, el("caption", {}, title),
    el("tr", {}, el("th", { scope: "col" }, "Day"), ...statuses.map((st) => el("th", { scope: "col" }, status(st)))),
    ...days.map((d) => el("tr", {}, el("th", { scope: "row" }, d.day.slice(0, 10)), ...d.counts.map((c) => el("td", {}, String(c.count))))));
  host.replaceChildren(s, table);
}

/** barChart draws counts per day as SVG bars, with the numbers as text
 * (and a table for screen readers): 14 bars need no charting library. */
function barChart(host: HTMLElement, data: { day: string; count: number }[], title: string): void {
  const W = 520, H = 96, top = 16, bottom = 18;
  const max = Math.max(1, ...data.map((d) => d.count));
  const bw = W / data.length;
  const ns = "http://www.w3.org/2000/svg";
  const s = document.createElementNS(ns, "svg");
  s.setAttribute("viewBox", `0 0 ${W} ${H}`);
  s.setAttribute("aria-hidden", "true");
  data.forEach((d, i) => {
    const h = ((H - top - bottom) * d.count) / max;
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("x", (i * bw + 3).toFixed(1));
    r.setAttribute("y", (H - bottom - h).toFixed(1));
    r.setAttribute("width", (bw - 6).toFixed(1));
    r.setAttribute("height", h.toFixed(1));
    r.setAttribute("data-day", d.day);
    r.setAttribute("data-count", String(d.count));
    const v = document.createElementNS(ns, "text");
    v.setAttribute("x", (i * bw + bw / 2).toFixed(1));
    v.setAttribute("y", (H - bottom - h - 3).toFixed(1));
    v.setAttribute("class", "value");
    v.textContent = d.count ? String(d.count) : "";
    const l = document.createElementNS(ns, "text");
    l.setAttribute("x", (i * bw + bw / 2).toFixed(1));
    l.setAttribute("y", String(H - 5));
    l.textContent = String(Number(d.day.slice(8)));
    if (i === 0) l.setAttribute("class", "today");
    s.append(r, v, l);
  });
  const table = el("table", { class: "sr-only" }, el("caption", {}, title),
    el("tr", {}, el("th", { scope: "col" }, "Day"), el("th", { scope: "col" }, "Shipments")),
    ...data.map((d) => el("tr", {}, el("th", { scope: "row" }, d.day), el("td", {}, String(d.count)))));
  host.replaceChildren(s, table);
}

function containerTiles(data: TilesAnswer, marks: boolean): void {
  tile("tile-status", "Containers by status", data.byStatus.map((g) => ({ key: `status:${g.status ?? "UNKNOWN"}`, label: status(g.status), value: g.count })), marks, "No containers");
  const lfd = new Map(data.byLastFreeDay.map((g) => [g.lastFreeDay, g.count]));
  tile("tile-lfd", "Last free days (not yet out)", [
    { key: "lfd:OVERDUE", label: "Overdue", value: lfd.get("OVERDUE") ?? 0 },
    { key: "lfd:TODAY", label: "Today", value: lfd.get("TODAY") ?? 0 },
    { key: "lfd:NEXT_3_DAYS", label: "Next three days", value: lfd.get("NEXT_3_DAYS") ?? 0 },
  ], marks, "");
  const holds = data.holds.reduce((n, g) => n + g.count, 0);
  tile("tile-holds", "Holds", [{ key: "holds:total", label: "Containers with holds", value: holds }], marks, "");
}

// ---------------------------------------------------------------- map

interface MapAnswer { containers: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: MapContainer[] } }

async function loadMap(): Promise<void> {
  const all: MapContainer[] = [];
  let after: string | null = null;
  let total = 0;
  let fresh = false;
  // Pages of 100 until the last: a few hundred containers in flight is the
  // everyday case; each page is its own cached GET (304 when unchanged).
  for (let i = 0; i < 50; i++) {
    const r: { data: MapAnswer; fresh: boolean } = await query<MapAnswer>("OpsMap", after ? { after } : {});
    fresh ||= r.fresh;
    total = r.data.containers.totalCount;
    all.push(...r.data.containers.nodes);
    if (!r.data.containers.pageInfo.hasNextPage) break;
    after = r.data.containers.pageInfo.endCursor;
  }
  countTraffic();
  if (!fresh && state.map) return;
  if (!state.map) {
    state.map = new ContainerMap((id, shipmentId, opener) => openPanel(id, shipmentId, opener as HTMLElement));
    $("map").replaceChildren(state.map.svg);
  }
  const { counts, unplaced } = state.map.draw(all);
  const legend = $("map-legend");
  legend.replaceChildren(...(Object.keys(stateWords) as MarkState[]).map((k) =>
    el("li", { "data-state": k }, el("span", { class: "swatch", "aria-hidden": "true" }), `${stateWords[k]}: `, el("strong", { "data-count": k }, String(counts[k])))));
  const placed = all.length - unplaced;
  put($("map-summary"), `${placed} of ${total} containers not yet picked up on the map${unplaced ? `; ${unplaced} without a known place` : ""}.`, false);
  setData("mapMarkers", placed);
  setData("mapTotal", total);
}

// ---------------------------------------------------------------- table

async function loadFilterOptions(): Promise<void> {
  const { data } = await query<{ terminals: Group[]; lines: { shippingLineScac: string | null; shippingLine: { name: string } | null }[] }>("OpsFilterOptions");
  const term = $<HTMLSelectElement>("f-terminal");
  const line = $<HTMLSelectElement>("f-line");
  term.length = 1;
  line.length = 1;
  for (const g of data.terminals) if (g.podTerminal) term.append(el("option", { value: g.podTerminal.id }, g.podTerminal.name));
  for (const g of data.lines) if (g.shippingLineScac) line.append(el("option", { value: g.shippingLineScac }, `${g.shippingLine?.name ?? g.shippingLineScac} (${g.shippingLineScac})`));
}

const columns = ["bl", "line", "terminal", "eta", "tags", "container", "status", "lfd", "holds"] as const;

function rowCells(s: Shipment, c: RowContainer | null, first: boolean): Record<(typeof columns)[number], string> {
  const holds = c ? c.holdsAtPodTerminal.filter((h) => h.status === "HOLD" || h.status === "PENDING") : [];
  return {
    bl: s.billOfLadingNumber,
    line: first ? s.shippingLineShortName || s.shippingLineScac : "",
    terminal: first ? s.podTerminal?.name ?? "" : "",
    eta: first ? day(s.podEtaAt, s.podTimezone) : "",
    tags: first ? s.tags.join(", ") : "",
    container: c ? c.number : "No containers",
    status: c ? status(c.currentStatus) : "",
    lfd: c ? day(c.pickupLfd, s.podTimezone) : "",
    holds: holds.map((h) => h.name).join(", ") || (c ? "None" : ""),
  };
}

async function loadPage(marks: boolean): Promise<void> {
  const variables = { ...state.cursor, filter: state.filter, orderBy: state.orderBy };
  // A 304 gives the kept answer: redrawing it changes no cell.
  const { data } = await query<ShipmentsAnswer>("OpsShipments", variables);
  countTraffic();
  const conn = data.shipments;
  state.pageInfo = conn.pageInfo;
  $<HTMLButtonElement>("prev-page").disabled = !conn.pageInfo.hasPreviousPage;
  $<HTMLButtonElement>("next-page").disabled = !conn.pageInfo.hasNextPage;
  const summary = conn.totalCount === 0 ? "No shipments match." : `Page ${state.page}: ${conn.edges.length} of ${conn.totalCount} shipments.`;
  put($("table-summary"), summary, false);
  const tbody = $("shipments").querySelector("tbody")!;
  const old = new Map<string, HTMLTableRowElement>();
  for (const tr of Array.from(tbody.rows)) old.set(tr.dataset.key!, tr);
  const rows: HTMLTableRowElement[] = [];
  state.visibleShipments = new Set();
  state.visibleContainers = new Set();
  for (const { node: s } of conn.edges) {
    state.visibleShipments.add(s.id);
    const cs: (RowContainer | null)[] = s.containers.length ? s.containers : [null];
    cs.forEach((c, i) => {
      if (c) state.visibleContainers.add(c.id);
      const key = c ? c.id : "s:" + s.id;
      const cells = rowCells(s, c, i === 0);
      let tr = old.get(key);
      const reuse = !!tr && marks;
      if (!tr || !marks) {
        tr = el("tr", { "data-key": key, "data-shipment-id": s.id });
        if (c) tr.dataset.containerId = c.id;
        for (const col of columns) {
          const td = el(col === "bl" ? "th" : "td", { "data-col": col });
          if (col === "bl") td.setAttribute("scope", "row");
          tr.append(td);
        }
      }
      if (i === 0) tr.classList.add("first");
      else tr.classList.remove("first");
      for (const col of columns) {
        const td = tr.querySelector<HTMLElement>(`[data-col="${col}"]`)!;
        if (col === "container" && c) {
          let b = td.querySelector("button");
          if (!b) {
            b = el("button", { type: "button", class: "container", "aria-haspopup": "dialog" });
            b.addEventListener("click", () => openPanel(c.id, s.id, b));
            td.replaceChildren(b);
          }
          b.textContent = cells.container;
          b.setAttribute("aria-label", `Container ${c.number}: details`);
          continue;
        }
        if (col === "bl") {
          // Later rows of a shipment name it for screen readers only.
          const span = td.firstElementChild as HTMLElement | null ?? td.appendChild(el("span"));
          put(span, cells.bl, false);
          span.className = i === 0 ? "" : "sr-only";
          continue;
        }
        const changed = put(td, cells[col], reuse);
        if (changed && reuse && col === "status" && c) announce(`Container ${c.number} is now ${cells.status}.`);
        if (col === "lfd") td.classList.toggle("overdue", !!c?.pickupLfd && new Date(c.pickupLfd) < new Date() && ["AVAILABLE", "NOT_AVAILABLE", "GROUNDED", "ON_SHIP", "NEW"].includes(c.currentStatus));
      }
      rows.push(tr);
    });
  }
  tbody.replaceChildren(...rows);
}

function announce(text: string): void {
  $("announce").textContent = text;
}

function readFilters(): void {
  const f = new FormData($<HTMLFormElement>("filters"));
  const filter: Record<string, unknown> = {};
  const s = String(f.get("search") ?? "").trim();
  if (s) filter.search = s;
  const line = String(f.get("line") ?? "");
  if (line) filter.shippingLineScacs = [line];
  const term = String(f.get("terminal") ?? "");
  if (term) filter.podTerminalIds = [term];
  const from = String(f.get("etaFrom") ?? "");
  if (from) filter.etaFrom = from + "T00:00:00Z";
  const to = String(f.get("etaTo") ?? "");
  if (to) filter.etaTo = to + "T00:00:00Z";
  const tags = String(f.get("tags") ?? "").split(",").map((t) => t.trim()).filter(Boolean);
  if (tags.length) filter.tags = tags;
  const [field, direction] = String(f.get("sort") ?? "CREATED_AT:DESC").split(":");
  state.filter = filter;
  state.orderBy = { field, direction };
}

async function goto(cursor: Record<string, unknown>, page: number): Promise<void> {
  state.cursor = cursor;
  state.page = page;
  try {
    await loadPage(false);
    showAlert("");
  } catch (e) {
    fail(e, () => void goto(cursor, page));
  }
}

// ---------------------------------------------------------------- container panel

interface ContainerAnswer {
  container: null | {
    id: string; number: string; currentStatus: string; equipmentType: string | null; equipmentLength: number | null; pickupLfd: string | null; podTimezone: string | null;
    availabilityKnown: boolean; availableForPickup: boolean | null; locationAtPodTerminal: string | null;
    importDeadlines: { pickupLfdTerminal: string | null; pickupLfdLine: string | null; pickupLfdRail: string | null } | null;
    holdsAtPodTerminal: Hold[]; feesAtPodTerminal: { type: string; amount: number; currencyCode: string }[]; podTerminal: Terminal | null;
    customFields: FieldValue[];
    documents: { id: string; name: string; fileName: string; documentType: string; downloadUrl: string | null }[];
    transportEvents: JourneyEvent[];
    shipment: {
      id: string; billOfLadingNumber: string; shippingLineShortName: string; portOfLadingName: string | null; portOfLadingLocode: string | null;
      portOfDischargeName: string | null; portOfDischargeLocode: string | null; destinationName: string | null; destinationLocode: string | null;
      podVesselName: string | null; podVoyageNumber: string | null; polEtdAt: string | null; polAtdAt: string | null; podEtaAt: string | null; podOriginalEtaAt: string | null; podAtaAt: string | null;
      customFields: FieldValue[];
    };
  };
  containerFields: { nodes: FieldDef[] };
  shipmentFields: { nodes: FieldDef[] };
}

function openPanel(containerId: string, shipmentId: string, opener: HTMLElement | null): void {
  state.panel = { containerId, shipmentId, opener };
  const p = $("panel");
  p.hidden = false;
  $("panel-body").replaceChildren(el("p", {}, "Loading…"));
  void loadPanel(true);
}

function closePanel(): void {
  const opener = state.panel?.opener;
  state.panel = null;
  $("panel").hidden = true;
  opener?.focus();
}

function dl(pairs: [string, string | Node][]): HTMLDListElement {
  const d = el("dl");
  for (const [k, v] of pairs) d.append(el("dt", {}, k), el("dd", {}, v));
  return d;
}

async function loadPanel(focus: boolean): Promise<void> {
  const open = state.panel;
  if (!open) return;
  let data: ContainerAnswer;
  let fresh: boolean;
  try {
    ({ data, fresh } = await query<ContainerAnswer>("OpsContainer", { id: open.containerId }));
  } catch (e) {
    $("panel-body").replaceChildren(el("p", { role: "alert" }, describe(e)));
    return;
  }
  countTraffic();
  if (state.panel !== open) return;
  if (!fresh && !focus) return;
  const c = data.container;
  if (!c) {
    $("panel-body").replaceChildren(el("p", {}, "This container no longer exists."));
    return;
  }
  $("panel-title").textContent = `Container ${c.number}`;
  const s = c.shipment;
  const parts: Node[] = [];
  const d = c.importDeadlines;
  parts.push(dl([
    ["Status", el("span", { "data-panel": "status" }, status(c.currentStatus))],
    ["Shipment", `${s.billOfLadingNumber} (${s.shippingLineShortName})`],
    ["Terminal", c.podTerminal?.name ?? "Not known"],
    ["Equipment", [c.equipmentLength ? `${c.equipmentLength}'` : "", c.equipmentType ?? ""].join(" ").trim() || "Not known"],
    ["Last free day", c.pickupLfd ? day(c.pickupLfd, c.podTimezone) : "Not known"],
    ["… terminal / line / rail", [d?.pickupLfdTerminal, d?.pickupLfdLine, d?.pickupLfdRail].map((x) => (x ? day(x, c.podTimezone) : "–")).join(" / ")],
    ["Available for pickup", !c.availabilityKnown ? "Not reported" : c.availableForPickup ? "Yes" : "No"],
    ["Location", c.locationAtPodTerminal ?? "Not reported"],
  ]));
  parts.push(el("h3", {}, "Journey"));
  const vessel = s.podVesselName ? ` by ${s.podVesselName}${s.podVoyageNumber ? ` ${s.podVoyageNumber}` : ""}` : "";
  const eta = s.podEtaAt ? `, ETA ${day(s.podEtaAt)}` : "";
  const firstEta = s.podOriginalEtaAt && s.podEtaAt && day(s.podOriginalEtaAt) !== day(s.podEtaAt) ? ` (first ETA ${day(s.podOriginalEtaAt)})` : "";
  parts.push(el("ol", { class: "route", "aria-label": "Route" },
    el("li", {}, `${s.portOfLadingName ?? s.portOfLadingLocode ?? "Port of lading not known"}${s.polAtdAt ? `, left ${day(s.polAtdAt)}` : s.polEtdAt ? `, leaves ${day(s.polEtdAt)}` : ""}`),
    el("li", {}, `${s.portOfDischargeName ?? s.portOfDischargeLocode ?? "Port of discharge not known"}${vessel}${s.podAtaAt ? `, arrived ${day(s.podAtaAt)}` : eta + firstEta}`),
    ...(s.destinationName || s.destinationLocode ? [el("li", {}, s.destinationName ?? s.destinationLocode ?? "")] : []),
  ));
  const mapHost = el("div", { id: "route-map", class: "route-host" });
  parts.push(mapHost);
  const items = timeline(c.transportEvents, { locode: s.portOfDischargeLocode, at: s.podOriginalEtaAt });
  parts.push(items.length
    ? el("ol", { class: "timeline", "aria-label": "Milestones, oldest first" }, ...items.map((it) => el("li", { "data-kind": it.estimated ? "estimated" : "actual", ...(it.was.length ? { "data-changed-estimate": "" } : {}) },
      el("time", it.at ? { datetime: it.at } : {}, when(it.at, it.timezone)),
      ...(it.was.length ? [el("span", { class: "was" }, "was ", ...it.was.map((w) => el("del", {}, when(w, it.timezone))))] : []),
      el("span", { class: "what" }, it.text),
      ...(it.estimated ? [el("span", { class: "est" }, it.was.length ? " estimate changed" : " estimated")] : []))))
    : el("p", {}, "No milestones yet."));
  parts.push(el("h3", {}, "Holds"));
  parts.push(c.holdsAtPodTerminal.length
    ? el("ul", {}, ...c.holdsAtPodTerminal.map((h) => el("li", {}, `${h.name}: ${h.status.toLowerCase()}${h.description ? ` (${h.description})` : ""}`)))
    : el("p", {}, "No holds."));
  parts.push(el("h3", {}, "Fees"));
  parts.push(c.feesAtPodTerminal.length
    ? el("ul", {}, ...c.feesAtPodTerminal.map((f) => el("li", {}, `${f.type.toLowerCase().replace(/_/g, " ")}: ${new Intl.NumberFormat("en-US", { style: "currency", currency: f.currencyCode }).format(f.amount)}`)))
    : el("p", {}, "No fees."));
  parts.push(el("h3", {}, "Custom fields"));
  if (state.role === "VIEWER") parts.push(el("p", { class: "help", id: "viewer-note" }, "This key is a viewer key: the API refuses changes, and says so here."));
  parts.push(fieldsForm("container", c.id, data.containerFields.nodes, c.customFields));
  parts.push(el("h4", {}, "Of its shipment"));
  parts.push(fieldsForm("shipment", s.id, data.shipmentFields.nodes, s.customFields));
  parts.push(el("h3", {}, "Documents"));
  parts.push(c.documents.length
    ? el("ul", {}, ...c.documents.map((doc) => el("li", {}, doc.downloadUrl
      ? el("a", { href: doc.downloadUrl, download: doc.fileName, rel: "noreferrer" }, `${doc.name} (${doc.documentType})`)
      : `${doc.name} (${doc.documentType}, no file)`)))
    : el("p", {}, "No documents."));
  $("panel-body").replaceChildren(...parts);
  if (focus) $("panel").focus();
  void loadRoute(open, c.id);
}

/** fieldsForm renders the custom fields of one record, each with its editor. */
function fieldsForm(entity: "container" | "shipment", id: string, defs: FieldDef[], values: FieldValue[]): HTMLElement {
  const box = el("div", { class: "fields", "data-entity": entity });
  const byslug = new Map(values.map((v) => [v.apiSlug, v]));
  if (!defs.length) box.append(el("p", {}, "None defined."));
  for (const def of defs) {
    const v = byslug.get(def.apiSlug);
    const inputId = `cf-${entity}-${def.apiSlug}`;
    const msg = el("p", { class: "msg", id: inputId + "-msg", "aria-live": "polite" });
    const input = editor(def, v?.value, inputId);
    input.setAttribute("aria-describedby", msg.id + (state.role === "VIEWER" ? " viewer-note" : ""));
    const shown = el("span", { class: "display", "data-field": def.apiSlug }, v?.displayValue ?? "");
    const save = el("button", { type: "submit" }, "Save");
    save.setAttribute("aria-label", `Save ${def.displayName}`);
    const form = el("form", { class: "field", "data-field": def.apiSlug },
      el("label", { for: inputId }, def.displayName), input, save, msg);
    if (v?.displayValue && def.dataType === "REFERENCE") form.insertBefore(shown, msg);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      msg.className = "msg";
      msg.textContent = "Saving…";
      save.disabled = true;
      try {
        const value = readEditor(def, input);
        const name = entity === "container" ? "OpsSetContainerField" : "OpsSetShipmentField";
        const out = await mutate<Record<string, FieldValue | null>>(name, { id, apiSlug: def.apiSlug, value });
        const saved = Object.values(out)[0];
        msg.className = "msg saved";
        msg.textContent = saved ? `Saved: ${saved.displayValue ?? JSON.stringify(saved.value)}` : "Cleared.";
      } catch (e) {
        msg.className = "msg error";
        msg.setAttribute("role", "alert");
        // The API's own words: a person can act on them.
        msg.textContent = e instanceof ApiError && e.status !== 0 && e.status !== 429 && e.status !== 503 ? e.message : describe(e);
      } finally {
        save.disabled = false;
        countTraffic();
      }
    });
    box.append(form);
  }
  return box;
}

function editor(def: FieldDef, value: unknown, id: string): HTMLInputElement | HTMLSelectElement {
  switch (def.dataType) {
    case "ENUM":
    case "BOOLEAN": {
      const opts = def.dataType === "BOOLEAN" ? [{ value: "true", label: "Yes" }, { value: "false", label: "No" }] : def.options;
      const s = el("select", { id, name: def.apiSlug }, el("option", { value: "" }, "(not set)"), ...opts.map((o) => el("option", { value: o.value }, o.label)));
      s.value = value == null ? "" : String(value);
      return s;
    }
    case "ENUM_MULTI": {
      const s = el("select", { id, name: def.apiSlug, multiple: "" }, ...def.options.map((o) => el("option", { value: o.value }, o.label)));
      const set = new Set(Array.isArray(value) ? value.map(String) : []);
      for (const o of Array.from(s.options)) o.selected = set.has(o.value);
      return s;
    }
  }
  const type = def.dataType === "NUMBER" ? "number" : def.dataType === "DATE" ? "date" : "text";
  const i = el("input", { id, name: def.apiSlug, type, autocomplete: "off" });
  i.value = value == null ? "" : String(value);
  if (def.dataType === "NUMBER") i.step = "any";
  return i;
}

function readEditor(def: FieldDef, input: HTMLInputElement | HTMLSelectElement): unknown {
  if (def.dataType === "ENUM_MULTI") {
    const vals = Array.from((input as HTMLSelectElement).selectedOptions).map((o) => o.value);
    return vals.length ? vals : null;
  }
  const raw = input.value.trim();
  if (raw === "") return null;
  if (def.dataType === "NUMBER") return Number(raw);
  if (def.dataType === "BOOLEAN") return raw === "true";
  return raw;
}

/** loadRoute draws the open panel's route map from /v2 map_geojson. */
async function loadRoute(open: NonNullable<typeof state.panel>, id: string): Promise<void> {
  let fc: RouteGeoJSON;
  try {
    fc = await getJSON<RouteGeoJSON>(`/v2/containers/${encodeURIComponent(id)}/map_geojson`);
  } catch (e) {
    if (state.panel === open) document.getElementById("route-map")?.replaceChildren(el("p", {}, `Route map: ${describe(e)}`));
    return;
  }
  countTraffic();
  const host = document.getElementById("route-map");
  if (state.panel !== open || !host) return;
  const m = routeMap(fc);
  host.replaceChildren(m ?? el("p", {}, "No places of this journey are known yet."));
}

// ---------------------------------------------------------------- live

let pending = { tiles: false, page: false, panel: false, map: false };
let flushTimer = 0;

function onChange(ev: ChangeEvent): void {
  setData("lastLogId", ev.logId ?? "");
  setData("events", Number(body.dataset.events ?? 0) + 1);
  if (ev.operation === "RESYNC") {
    pending = { tiles: true, page: true, panel: true, map: true };
  } else {
    if (ev.type === "CONTAINER" || ev.type === "SHIPMENT" || ev.type === "TRANSPORT_EVENT") pending.map = true;
    if (ev.type === "CONTAINER" || ev.type === "SHIPMENT" || ev.type === "TRANSPORT_EVENT") pending.tiles = true; // the status trend reads transport events
    if ((ev.type === "CONTAINER" && (state.visibleContainers.has(ev.id ?? "") || state.visibleShipments.has(ev.parentId ?? "") || ev.operation !== "UPDATE")) ||
      (ev.type === "SHIPMENT" && (state.visibleShipments.has(ev.id ?? "") || ev.operation !== "UPDATE"))) pending.page = true;
    const p = state.panel;
    if (p && [p.containerId, p.shipmentId].some((x) => x === ev.id || x === ev.parentId)) pending.panel = true;
    if (p && ev.type === "DOCUMENT") pending.panel = true;
  }
  clearTimeout(flushTimer);
  flushTimer = window.setTimeout(flush, 20); // coalesce a burst into one read
}

async function flush(): Promise<void> {
  const p = pending;
  pending = { tiles: false, page: false, panel: false, map: false };
  try {
    await Promise.all([p.tiles ? loadTiles(true) : null, p.page ? loadPage(true) : null, p.panel ? loadPanel(false) : null, p.map ? loadMap() : null]);
  } catch (e) {
    fail(e, () => {
      pending = { tiles: true, page: true, panel: true, map: true };
      void flush();
    });
  }
}

function liveState(s: LiveState, detail?: string): void {
  setData("live", s);
  const words = { off: "off", connecting: "connecting…", live: "on", reconnecting: "reconnecting…" }[s];
  $("live-status").textContent = `Live updates: ${words}${detail ? ` (${detail})` : ""}`;
  if (s === "live") {
    setData("liveConnects", state.live?.connects ?? 0);
    if (!performance.getEntriesByName("ops-live-ready").length) performance.mark("ops-live-ready");
  }
}

// ---------------------------------------------------------------- key and start

function forgetKey(clearAlert = true): void {
  sessionStorage.removeItem(KEY);
  state.live?.stop();
  state.live = null;
  state.key = "";
  setKey("");
  $("main").hidden = true;
  $("panel").hidden = true;
  $("forget-key").hidden = true;
  $("key-section").hidden = false;
  $("who").textContent = "";
  if (clearAlert) showAlert("");
  setData("opsState", "key");
  $<HTMLInputElement>("api-key").focus();
}

async function start(key: string): Promise<void> {
  state.key = key;
  setKey(key);
  setData("opsState", "loading");
  showAlert("");
  try {
    const { data } = await query<{ viewer: { role: string; account: { companyName: string }; user: { email: string } | null } }>("OpsViewer");
    state.role = data.viewer.role;
    sessionStorage.setItem(KEY, key);
    $("who").textContent = `${data.viewer.account.companyName} · ${data.viewer.user?.email ?? "account key"} · ${data.viewer.role.toLowerCase()}`;
    $("key-section").hidden = true;
    $("main").hidden = false;
    $("forget-key").hidden = false;
    await Promise.all([loadTiles(false), loadPage(false), loadFilterOptions(), loadMap()]);
    if (!state.firstRender) {
      state.firstRender = true;
      performance.mark("ops-first-render");
    }
    setData("opsState", "ready");
    state.live = new Live(key, onChange, liveState);
    state.live.start();
  } catch (e) {
    setData("opsState", "key");
    fail(e, () => void start(key));
  }
}

function init(): void {
  // The panel starts below the header, whose controls it must never cover
  // (the header wraps to more lines when narrow or zoomed). Measured in
  // page coordinates: a resize may come while the page is scrolled.
  const head = document.querySelector<HTMLElement>("header.top")!;
  new ResizeObserver(() => document.documentElement.style.setProperty("--head-h", `${head.getBoundingClientRect().bottom + window.scrollY}px`)).observe(head);
  $<HTMLFormElement>("key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const k = $<HTMLInputElement>("api-key").value.trim();
    if (k) void start(k);
  });
  $("forget-key").addEventListener("click", () => forgetKey());
  $<HTMLFormElement>("filters").addEventListener("submit", (ev) => {
    ev.preventDefault();
    readFilters();
    void goto({ first: PAGE_SIZE }, 1);
  });
  $<HTMLFormElement>("filters").addEventListener("reset", () => {
    window.setTimeout(() => {
      readFilters();
      void goto({ first: PAGE_SIZE }, 1);
    });
  });
  $("next-page").addEventListener("click", () => {
    if (state.pageInfo?.endCursor) void goto({ first: PAGE_SIZE, after: state.pageInfo.endCursor }, state.page + 1);
  });
  $("prev-page").addEventListener("click", () => {
    if (state.pageInfo?.startCursor) void goto({ last: PAGE_SIZE, before: state.pageInfo.startCursor }, Math.max(1, state.page - 1));
  });
  $("panel-close").addEventListener("click", closePanel);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && state.panel) closePanel();
  });
  const saved = sessionStorage.getItem(KEY);
  if (saved) void start(saved);
  else $<HTMLInputElement>("api-key").focus();
}

init();
