// The container panel's journey: the route on a small map (the /v2
// map_geojson of the container: ports, legs sailed, the vessel, legs ahead)
// and a timeline of milestones in plain words, estimates that changed shown
// as changed.
import { geoNaturalEarth1 } from "d3-geo";
import { basemap, svg, WIDTH } from "./geo";

// ---------------------------------------------------------------- route map

interface Feature {
  type: "Feature";
  geometry: { type: "Point"; coordinates: [number, number] } | { type: "LineString"; coordinates: [number, number][] };
  properties: { feature_type: string; name?: string; label?: string; vessel_name?: string; ports_sequence?: number };
}
export interface RouteGeoJSON { type: "FeatureCollection"; features: Feature[] }

const legWords: Record<string, string> = {
  past_vessel_locations: "sailed",
  estimated_partial_leg: "ahead",
  estimated_full_legs: "ahead",
};

const H = 260;

/** routeMap draws the route: legs (sailed solid, ahead dashed), ports, vessel. */
export function routeMap(fc: RouteGeoJSON): SVGSVGElement | null {
  const lines = fc.features.filter((f) => f.geometry.type === "LineString");
  const points = fc.features.filter((f) => f.geometry.type === "Point");
  if (!points.length) return null;
  const p = geoNaturalEarth1();
  // Fit the route with room around it; a lone point gets a region's width.
  const fit = points.length > 1 || lines.length ? fc : { type: "Feature" as const, geometry: { type: "MultiPoint" as const,
    coordinates: [[points[0].geometry.coordinates[0] as number - 15, points[0].geometry.coordinates[1] as number - 8], [points[0].geometry.coordinates[0] as number + 15, points[0].geometry.coordinates[1] as number + 8]] }, properties: {} };
  p.fitExtent([[40, 30], [WIDTH - 40, H - 30]], fit as never);
  const ports = points.filter((f) => f.properties.feature_type === "port");
  const words = ports.map((f) => f.properties.name ?? "").join(" → ");
  const s = basemap(p, `0 0 ${WIDTH} ${H}`, `Route map: ${words}`, false);
  s.classList.add("route-map");
  s.setAttribute("data-legs", String(lines.length));
  for (const f of lines) {
    const [a, b] = [f.geometry.coordinates[0], f.geometry.coordinates[f.geometry.coordinates.length - 1]] as [number, number][];
    const path = svg("path", { class: `leg leg-${legWords[f.properties.feature_type] ?? "ahead"}`, "data-leg": f.properties.feature_type, "aria-hidden": "true" });
    const pa = p(a)!;
    const pb = p(b)!;
    path.setAttribute("d", `M${pa[0].toFixed(1)},${pa[1].toFixed(1)}L${pb[0].toFixed(1)},${pb[1].toFixed(1)}`);
    s.append(path);
  }
  for (const f of points) {
    const [x, y] = p(f.geometry.coordinates as [number, number])!;
    if (f.properties.feature_type === "current_vessel") {
      const g = svg("g", { class: "vessel", "data-vessel": "", "aria-hidden": "true" });
      g.append(svg("path", { d: `M${(x - 7).toFixed(1)},${(y - 3).toFixed(1)}h14l-3,6h-8z` }));
      const t = svg("text", { x: (x + 10).toFixed(1), y: (y + 4).toFixed(1) });
      t.textContent = f.properties.vessel_name ?? "Vessel";
      g.append(t);
      s.append(g);
      continue;
    }
    const g = svg("g", { class: "port", "data-port": f.properties.name ?? "", "aria-hidden": "true" });
    g.append(svg("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: "9" }));
    const t = svg("text", { x: x.toFixed(1), y: (y - 16).toFixed(1), "text-anchor": "middle" });
    t.textContent = f.properties.name ?? "";
    g.append(t);
    s.append(g);
  }
  return s;
}

// ---------------------------------------------------------------- timeline

export interface JourneyEvent {
  id: string;
  event: string;
  timestamp: string | null;
  timezone: string | null;
  createdAt: string;
  locationLocode: string | null;
  voyageNumber: string | null;
  location: { name: string; code: string } | null;
  vessel: { name: string } | null;
}

// [what happened, what is expected]; "at" means the place follows.
const phrases: Record<string, [string, string]> = {
  empty_out: ["Empty container picked up at", "Empty container due out at"],
  full_in: ["Received full at", "Due in full at"],
  vessel_loaded: ["Loaded on the vessel at", "Due to be loaded at"],
  vessel_departed: ["Vessel departed", "Vessel due to depart"],
  vessel_arrived: ["Vessel arrived at", "Vessel due at"],
  vessel_discharged: ["Discharged at", "Due to be discharged at"],
  transshipment_arrived: ["Arrived for transshipment at", "Due for transshipment at"],
  transshipment_discharged: ["Discharged for transshipment at", "Due to be discharged for transshipment at"],
  transshipment_loaded: ["Loaded for transshipment at", "Due to be loaded for transshipment at"],
  transshipment_departed: ["Departed transshipment port", "Due to leave transshipment port"],
  feeder_arrived: ["Feeder arrived at", "Feeder due at"],
  feeder_departed: ["Feeder departed", "Feeder due to depart"],
  rail_loaded: ["Loaded on rail at", "Due to be loaded on rail at"],
  rail_departed: ["Train departed", "Train due to depart"],
  rail_arrived: ["Train arrived at", "Train due at"],
  rail_unloaded: ["Unloaded from rail at", "Due to be unloaded from rail at"],
  arrived_at_inland_destination: ["Arrived at the inland destination", "Due at the inland destination"],
  full_out: ["Picked up (full) at", "Due to be picked up at"],
  empty_in: ["Empty container returned at", "Empty return due at"],
  available: ["Available for pickup at", "Due to be available at"],
};

/** milestone is the event's kind (vessel_departed) and whether it is an estimate. */
export function milestone(event: string): { kind: string; estimated: boolean } {
  const rest = event.replace(/^container\.(transport\.|pickup\.)?/, "");
  const estimated = rest.startsWith("estimated.");
  return { kind: estimated ? rest.slice("estimated.".length) : rest, estimated };
}

/** plainWords names an event as a person would: "Vessel departed Hamburg". */
export function plainWords(e: JourneyEvent): string {
  const { kind, estimated } = milestone(e.event);
  const place = e.location?.name ?? e.locationLocode ?? "";
  const ph = phrases[kind];
  let text: string;
  if (ph) {
    text = ph[estimated ? 1 : 0];
    if (place) text += ` ${place}`;
    else text = text.replace(/ (at|depart|port)$/, "");
  } else {
    const words = kind.replace(/[._]/g, " ");
    text = (estimated ? "Expected: " : "") + words.charAt(0).toUpperCase() + words.slice(1) + (place ? ` at ${place}` : "");
  }
  if (e.vessel && /vessel|transshipment|feeder/.test(kind)) text += ` (${e.vessel.name}${e.voyageNumber ? ` ${e.voyageNumber}` : ""})`;
  return text;
}

export interface TimelineItem {
  text: string;
  at: string | null;
  timezone: string | null;
  estimated: boolean;
  /** Earlier estimates of the same milestone, oldest first. */
  was: string[];
}

/** timeline makes the journey's items: actual milestones, and for each
 * milestone not yet met its current estimate with the earlier ones it
 * replaced (the same milestone at the same place estimated again). The
 * shipment's first ETA counts as an earlier estimate of the arrival. */
export function timeline(events: JourneyEvent[], firstEta: { locode: string | null; at: string | null }): TimelineItem[] {
  const actual = new Set<string>();
  for (const e of events) {
    const m = milestone(e.event);
    if (!m.estimated) actual.add(`${m.kind}@${e.locationLocode ?? ""}`);
  }
  const estimates = new Map<string, JourneyEvent[]>();
  const items: TimelineItem[] = [];
  for (const e of events) {
    const m = milestone(e.event);
    const k = `${m.kind}@${e.locationLocode ?? ""}`;
    if (!m.estimated) {
      items.push({ text: plainWords(e), at: e.timestamp, timezone: e.timezone, estimated: false, was: [] });
      continue;
    }
    if (actual.has(k)) continue; // met: the actual says it
    const list = estimates.get(k) ?? [];
    list.push(e);
    estimates.set(k, list);
  }
  for (const [k, list] of estimates) {
    list.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
    const cur = list[list.length - 1];
    const was: string[] = [];
    for (const e of list.slice(0, -1)) if (e.timestamp && e.timestamp !== cur.timestamp && !was.includes(e.timestamp)) was.push(e.timestamp);
    if (k.startsWith("vessel_arrived@") && firstEta.at && firstEta.locode && k.endsWith("@" + firstEta.locode) &&
      cur.timestamp && Date.parse(firstEta.at) !== Date.parse(cur.timestamp) && !was.some((w) => Date.parse(w) === Date.parse(firstEta.at!))) {
      was.unshift(firstEta.at);
    }
    items.push({ text: plainWords(cur), at: cur.timestamp, timezone: cur.timezone, estimated: true, was });
  }
  const t = (i: TimelineItem) => (i.at ? Date.parse(i.at) : Number.MAX_SAFE_INTEGER);
  return items.sort((a, b) => t(a) - t(b));
}
