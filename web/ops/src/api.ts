// The page's one way to the API: operations of operations/*.graphql, sent
// by their trusted document id (Apollo's persisted-query extension). Queries
// go over GET, so the response cache's ETags apply: the page keeps the last
// answer of each URL and asks with If-None-Match; a 304 costs no body. When
// the server does not know an id (no manifest loaded), the automatic
// persisted queries protocol registers it once by sending the body too.
import operations from "ops-operations";

export interface GraphQLError {
  message: string;
  extensions?: { code?: string; [k: string]: unknown };
}

/** An answer the page cannot use, worded for people by describe(). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number, // HTTP status; 0 when the server was not reached
    readonly code: string, // the API's extensions.code, or ""
    readonly retryAfter: number, // seconds, from Retry-After (429, 503)
  ) {
    super(message);
  }
}

/** Counters of this page's API traffic (shown in data-* for measurements). */
export const traffic = { requests: 0, notModified: 0 };

let key = "";
export function setKey(k: string): void {
  key = k;
  cache.clear();
}

const cache = new Map<string, { etag: string; data: unknown }>();

function op(name: string): { id: string; body: string } {
  const o = operations[name];
  if (!o) throw new Error(`operation ${name} is not in the bundle`);
  return o;
}

function retryAfter(res: Response): number {
  const v = Number(res.headers.get("Retry-After"));
  return Number.isFinite(v) && v > 0 ? v : 5;
}

// codeStatus maps the API's error codes to the HTTP status a person knows.
const codeStatus: Record<string, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  RATE_LIMITED: 429,
  TOO_MANY_REQUESTS: 429,
  UNAVAILABLE: 503,
};

async function send(method: "GET" | "POST", name: string, variables: Record<string, unknown>, withBody: boolean): Promise<{ status: number; json: any; res: Response }> {
  const o = op(name);
  const extensions = { persistedQuery: { version: 1, sha256Hash: o.id } };
  const headers: Record<string, string> = {
    Accept: "application/graphql-response+json, application/json",
    Authorization: `Token ${key}`,
  };
  let url = "/graphql";
  let body: string | undefined;
  if (method === "GET") {
    const q = new URLSearchParams({ operationName: name, variables: JSON.stringify(variables), extensions: JSON.stringify(extensions) });
    if (withBody) q.set("query", o.body);
    url += "?" + q.toString();
    const hit = cache.get(url);
    if (hit) headers["If-None-Match"] = hit.etag;
  } else {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify({ operationName: name, variables, extensions, ...(withBody ? { query: o.body } : {}) });
  }
  let res: Response;
  traffic.requests++;
  try {
    res = await fetch(url, { method, headers, body, cache: "no-store", credentials: "omit" });
  } catch {
    throw new ApiError("The server could not be reached.", 0, "", 5);
  }
  if (res.status === 304) {
    traffic.notModified++;
    return { status: 304, json: cache.get(url)!.data, res };
  }
  if (res.status === 429 || res.status === 503) {
    const text = await res.text();
    throw new ApiError(messageOf(text) || res.statusText, res.status, "", retryAfter(res));
  }
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiError(`The server answered ${res.status} ${res.statusText}.`, res.status, "", 5);
  }
  const etag = res.headers.get("ETag");
  if (method === "GET" && etag && res.ok) cache.set(url, { etag, data: json });
  return { status: res.status, json, res };
}

function messageOf(text: string): string {
  try {
    const j = JSON.parse(text);
    return j?.errors?.[0]?.message ?? j?.errors?.[0]?.detail ?? j?.error ?? "";
  } catch {
    return text.trim().slice(0, 300);
  }
}

async function run<T>(method: "GET" | "POST", name: string, variables: Record<string, unknown>): Promise<{ data: T; fresh: boolean }> {
  let r = await send(method, name, variables, false);
  const notFound = (r.json?.errors as GraphQLError[] | undefined)?.some((e) => e.extensions?.code === "PERSISTED_QUERY_NOT_FOUND" || e.message === "PersistedQueryNotFound");
  if (notFound) r = await send(method, name, variables, true);
  const errors = r.json?.errors as GraphQLError[] | undefined;
  if (errors?.length) {
    const e = errors[0];
    const code = e.extensions?.code ?? "";
    throw new ApiError(e.message, codeStatus[code] ?? r.status, code, r.status === 429 || r.status === 503 ? retryAfter(r.res) : 5);
  }
  if (!r.json?.data) throw new ApiError(`The server answered ${r.status} without data.`, r.status, "", 5);
  return { data: r.json.data as T, fresh: r.status !== 304 };
}

/** A query over GET with If-None-Match; fresh is false for a 304. */
export function query<T>(name: string, variables: Record<string, unknown> = {}): Promise<{ data: T; fresh: boolean }> {
  return run<T>("GET", name, variables);
}

/** A mutation over POST. */
export async function mutate<T>(name: string, variables: Record<string, unknown>): Promise<T> {
  return (await run<T>("POST", name, variables)).data;
}

/** The trusted document of an operation (for the subscription). */
export function document(name: string): { id: string; body: string } {
  return op(name);
}

/** describe words an error for the person using the page. */
export function describe(e: unknown): string {
  if (!(e instanceof ApiError)) return `Something went wrong in the page: ${String(e)}`;
  // The server's words, as a sentence.
  const said = /[.!?]$/.test(e.message) ? e.message : `${e.message}.`;
  switch (e.status) {
    case 0:
      return `${said} Retrying in ${e.retryAfter} s.`;
    case 401:
      return `The server did not accept this API key (401): ${said} Enter a valid key.`;
    case 403:
      return `Not allowed (403): ${said}`;
    case 429:
      return `Too many requests (429): ${said} The server asked to wait ${e.retryAfter} s; the page retries then by itself.`;
    case 503:
      return `The service is unavailable for a moment (503): ${said} Retrying in ${e.retryAfter} s.`;
  }
  return e.message;
}

/** getJSON reads a /v2 resource (e.g. a container's map_geojson) with the
 * key, answers kept by ETag like the queries'. */
export async function getJSON<T>(path: string): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json, application/vnd.api+json", Authorization: `Token ${key}` };
  const hit = cache.get(path);
  if (hit) headers["If-None-Match"] = hit.etag;
  let res: Response;
  traffic.requests++;
  try {
    res = await fetch(path, { headers, cache: "no-store", credentials: "omit" });
  } catch {
    throw new ApiError("The server could not be reached.", 0, "", 5);
  }
  if (res.status === 304 && hit) {
    traffic.notModified++;
    return hit.data as T;
  }
  const text = await res.text();
  if (!res.ok) throw new ApiError(messageOf(text) || res.statusText, res.status, "", retryAfter(res));
  const json = JSON.parse(text) as T;
  const etag = res.headers.get("ETag");
  if (etag) cache.set(path, { etag, data: json });
  return json;
}
