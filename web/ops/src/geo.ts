// The basemap and the map's placing rules. The land is world-atlas's
// 1:110m TopoJSON, bundled at build time and drawn with d3-geo into SVG: no
// tile server, no CDN, nothing fetched but the API.
import { geoNaturalEarth1, geoPath, type GeoProjection } from "d3-geo";
import { feature } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import landTopo from "world-atlas/land-110m.json";

const SVG = "http://www.w3.org/2000/svg";

export const WIDTH = 960;
export const HEIGHT = 500;

export interface Place { name: string | null; latitude: number | null; longitude: number | null }

/** svg makes an SVG element with attributes. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string> = {}): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

let land: string | null = null;

/** world is the projection of the whole map, fitted to WIDTH × HEIGHT. */
export function world(): GeoProjection {
  return geoNaturalEarth1().fitSize([WIDTH, HEIGHT], { type: "Sphere" });
}

/** landPath is the land's SVG path in projection p (the world one is kept). */
export function landPath(p: GeoProjection, keep: boolean): string {
  if (keep && land !== null) return land;
  const topo = landTopo as unknown as Topology<{ land: GeometryCollection }>;
  const d = geoPath(p).digits(1)(feature(topo, topo.objects.land)) ?? "";
  if (keep) land = d;
  return d;
}

/** worldViewBox crops the world map to the inhabited latitudes (84°N to 58°S). */
export function worldViewBox(p: GeoProjection): string {
  const top = p([0, 84])![1];
  const bottom = p([0, -58])![1];
  return `0 ${top.toFixed(0)} ${WIDTH} ${(bottom - top).toFixed(0)}`;
}

/** basemap is an SVG with the land drawn, ready for marks. */
export function basemap(p: GeoProjection, viewBox: string, label: string, keep: boolean): SVGSVGElement {
  const s = svg("svg", { viewBox, role: "group", "aria-label": label, preserveAspectRatio: "xMidYMid meet" });
  s.append(svg("rect", { class: "sea", x: "-10", y: "-10", width: String(WIDTH + 20), height: String(HEIGHT + 20) }));
  s.append(svg("path", { class: "land", d: landPath(p, keep), "aria-hidden": "true" }));
  return s;
}

export function known(p: Place | null | undefined): p is Place & { latitude: number; longitude: number } {
  return !!p && typeof p.latitude === "number" && typeof p.longitude === "number";
}

/** routePath is a leg drawn as the great circle between two places. */
export function routePath(p: GeoProjection, from: [number, number], to: [number, number]): string {
  return geoPath(p).digits(1)({ type: "LineString", coordinates: [from, to] }) ?? "";
}
