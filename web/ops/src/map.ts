// The map of the account's containers not yet picked up: one marker per
// container where it is (the place of its latest actual transport event,
// or its vessel's last position while at sea), coloured by its state.
// Markers keep their node across re-reads and move with a transition.
import type { GeoProjection } from "d3-geo";
import { basemap, known, svg, world, worldViewBox, type Place } from "./geo";

export interface MapEvent {
  event: string;
  timestamp: string | null;
  location: Place | null;
  vessel: (Place & { name: string }) | null;
}

export interface MapContainer {
  id: string;
  number: string;
  currentStatus: string;
  pickupLfd: string | null;
  podTimezone: string | null;
  holdsAtPodTerminal: { status: string }[];
  transportEvents: MapEvent[];
  shipment: {
    id: string;
    billOfLadingNumber: string;
    podEtaAt: string | null;
    podOriginalEtaAt: string | null;
    podAtaAt: string | null;
    podTimezone: string | null;
    portOfLading: Place | null;
    portOfDischarge: Place | null;
  };
}

export type MarkState = "lfd" | "holds" | "late" | "ontime";

export const stateWords: Record<MarkState, string> = {
  lfd: "Last free day today or overdue",
  holds: "At the terminal with holds",
  late: "Late against the first ETA",
  ontime: "On time",
};

const atTerminal = new Set(["AVAILABLE", "NOT_AVAILABLE", "GROUNDED"]);

/** dayIn is the calendar day (YYYY-MM-DD) of iso in time zone tz. */
function dayIn(iso: string, tz: string | null): string {
  try {
    return new Intl.DateTimeFormat("en-CA", { timeZone: tz ?? "UTC", year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(iso));
  } catch {
    return iso.slice(0, 10);
  }
}

/** markState is what a marker's colour says, the most urgent first. */
export function markState(c: MapContainer, now = new Date()): MarkState {
  const tz = c.podTimezone ?? c.shipment.podTimezone;
  if (c.pickupLfd && atTerminal.has(c.currentStatus) && dayIn(c.pickupLfd, tz) <= dayIn(now.toISOString(), tz)) return "lfd";
  if (atTerminal.has(c.currentStatus) && c.holdsAtPodTerminal.some((h) => h.status === "HOLD" || h.status === "PENDING")) return "holds";
  const s = c.shipment;
  const eta = s.podAtaAt ?? s.podEtaAt;
  // A day's slack: lines restate ETAs by hours without anyone being late.
  if (eta && s.podOriginalEtaAt && Date.parse(eta) - Date.parse(s.podOriginalEtaAt) > 86400e3) return "late";
  return "ontime";
}

export interface Position { lon: number; lat: number; where: "sea" | "port"; words: string }

/** position places a container: the latest actual event's place, its
 * vessel's position when that event left port, else the port of lading
 * before departure and the port of discharge after arrival. */
export function position(c: MapContainer, now = Date.now()): Position | null {
  const actual = c.transportEvents
    .filter((e) => !e.event.includes(".estimated.") && e.timestamp && Date.parse(e.timestamp) <= now)
    .sort((a, b) => Date.parse(a.timestamp!) - Date.parse(b.timestamp!));
  const last = actual[actual.length - 1];
  if (last && /(vessel|transshipment)_departed$/.test(last.event) && known(last.vessel)) {
    return { lon: last.vessel.longitude, lat: last.vessel.latitude, where: "sea", words: `at sea on ${last.vessel.name}` };
  }
  if (last && known(last.location)) return { lon: last.location.longitude, lat: last.location.latitude, where: "port", words: `at ${last.location.name}` };
  const s = c.shipment;
  const p = s.podAtaAt ? s.portOfDischarge : s.portOfLading;
  if (known(p)) return { lon: p.longitude, lat: p.latitude, where: "port", words: `at ${p.name}` };
  return null;
}

function shortDay(iso: string | null, tz: string | null): string {
  if (!iso) return "not known";
  try {
    return new Intl.DateTimeFormat("en-GB", { timeZone: tz ?? "UTC", day: "numeric", month: "short" }).format(new Date(iso));
  } catch {
    return iso.slice(0, 10);
  }
}

/** describe is a marker's text: number, where, next port and ETA, state. */
export function describeMark(c: MapContainer, pos: Position, st: MarkState): string {
  const s = c.shipment;
  const next = s.podAtaAt ? "" : `, next ${s.portOfDischarge?.name ?? "port not known"} ETA ${shortDay(s.podEtaAt, s.podTimezone)}`;
  return `${c.number} ${pos.words}${next}: ${stateWords[st].toLowerCase()}`;
}

export class ContainerMap {
  private readonly proj: GeoProjection = world();
  readonly svg: SVGSVGElement;
  private readonly marks: SVGGElement;
  private readonly nodes = new Map<string, SVGGElement>();

  constructor(private readonly onOpen: (containerId: string, shipmentId: string, opener: Element) => void) {
    this.svg = basemap(this.proj, worldViewBox(this.proj), "Map of the containers not yet picked up", true);
    this.svg.id = "map-svg";
    this.marks = svg("g", { class: "marks" });
    this.svg.append(this.marks);
  }

  /** draw shows containers; returns the count per state and the unplaced. */
  draw(cs: MapContainer[]): { counts: Record<MarkState, number>; unplaced: number } {
    const counts: Record<MarkState, number> = { lfd: 0, holds: 0, late: 0, ontime: 0 };
    let unplaced = 0;
    const seen = new Set<string>();
    const stack = new Map<string, number>(); // markers at one spot fan out
    // Urgent ones last: drawn on top.
    const order: MarkState[] = ["ontime", "late", "holds", "lfd"];
    const placed = cs.map((c) => ({ c, pos: position(c), st: markState(c) }))
      .sort((a, b) => order.indexOf(a.st) - order.indexOf(b.st) || a.c.id.localeCompare(b.c.id));
    const children: SVGGElement[] = [];
    for (const { c, pos, st } of placed) {
      if (!pos) {
        unplaced++;
        continue;
      }
      counts[st]++;
      seen.add(c.id);
      const xy = this.proj([pos.lon, pos.lat])!;
      const spot = `${xy[0].toFixed(0)},${xy[1].toFixed(0)}`;
      const k = stack.get(spot) ?? 0;
      stack.set(spot, k + 1);
      const r = k === 0 ? 0 : 2.6 * Math.sqrt(k);
      const x = xy[0] + r * Math.cos(k * 2.4);
      const y = xy[1] + r * Math.sin(k * 2.4);
      let g = this.nodes.get(c.id);
      if (!g) {
        g = svg("g", { class: "mark", role: "button", tabindex: "0", "data-marker": "", "data-id": c.id });
        g.append(svg("circle", { r: "5" }), svg("title"));
        const node = g;
        const open = () => this.onOpen(c.id, node.dataset.shipmentId ?? "", node);
        g.addEventListener("click", open);
        g.addEventListener("keydown", (ev) => {
          if (ev.key === "Enter" || ev.key === " ") {
            ev.preventDefault();
            open();
          }
        });
        this.nodes.set(c.id, g);
      }
      const text = describeMark(c, pos, st);
      g.dataset.shipmentId = c.shipment.id;
      g.dataset.state = st;
      g.dataset.where = pos.where;
      g.dataset.lat = pos.lat.toFixed(4);
      g.dataset.lon = pos.lon.toFixed(4);
      g.setAttribute("aria-label", text);
      g.querySelector("title")!.textContent = text;
      // CSSOM (allowed by the CSP), so that a move is a transition.
      g.style.transform = `translate(${x.toFixed(1)}px, ${y.toFixed(1)}px)`;
      children.push(g);
    }
    for (const [id, g] of this.nodes) {
      if (!seen.has(id)) {
        g.remove();
        this.nodes.delete(id);
      }
    }
    // Reorder only what is out of place: a node moved in the DOM would
    // lose its transition (and its focus).
    children.forEach((g, i) => {
      const at = this.marks.children[i];
      if (at !== g) this.marks.insertBefore(g, at ?? null);
    });
    return { counts, unplaced };
  }
}
