// Live updates: the changes subscription over graphql-ws (the
// graphql-transport-ws protocol), the key in connection_init. A dropped
// socket is reopened with backoff and the subscription resumes after the
// last log id it delivered, so nothing committed meanwhile is missed and
// the page needs no reload.
import { createClient, type Client } from "graphql-ws";
import { document } from "./api";

export interface ChangeEvent {
  operation: "INSERT" | "UPDATE" | "DELETE" | "RESYNC";
  logId: string | null;
  type: string | null;
  id: string | null;
  parentId: string | null;
  changedFields: string[];
}

export type LiveState = "off" | "connecting" | "live" | "reconnecting";

export class Live {
  lastLogId: string | null = null;
  connects = 0;
  private client: Client | null = null;
  private stopped = false;
  private backoff = 250;
  private timer = 0;

  constructor(
    private readonly key: string,
    private readonly onEvent: (e: ChangeEvent) => void,
    private readonly onState: (s: LiveState, detail?: string) => void,
  ) {}

  start(): void {
    this.stopped = false;
    this.subscribe();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.client?.dispose();
    this.client = null;
    this.onState("off");
  }

  private subscribe(): void {
    this.connects++;
    this.onState(this.connects === 1 ? "connecting" : "reconnecting");
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
    const client = createClient({
      url,
      lazy: false,
      retryAttempts: 0, // reconnects are ours: each resumes after lastLogId
      onNonLazyError: () => {}, // the subscription's error sink handles it
      connectionParams: { Authorization: `Token ${this.key}` },
      on: {
        connected: () => {
          this.backoff = 250;
          this.onState("live");
        },
      },
    });
    this.client = client;
    const doc = document("OpsChanges");
    client.subscribe<{ changes: ChangeEvent }>(
      {
        operationName: "OpsChanges",
        query: doc.body,
        variables: { after: this.lastLogId },
        extensions: { persistedQuery: { version: 1, sha256Hash: doc.id } },
      },
      {
        next: (r) => {
          const ev = r.data?.changes;
          if (!ev) {
            if (r.errors?.length) this.onState("reconnecting", r.errors[0].message);
            return;
          }
          if (ev.logId) this.lastLogId = ev.logId;
          this.onEvent(ev);
        },
        error: (e) => this.retry(e),
        complete: () => this.retry(null),
      },
    );
  }

  private retry(e: unknown): void {
    if (this.stopped) return;
    const client = this.client;
    this.client = null;
    void client?.dispose();
    const code = (e as { code?: number } | null)?.code;
    if (code === 4401 || code === 4403) {
      this.onState("off", `the server closed live updates (${code}): ${(e as { reason?: string }).reason ?? ""}`);
      return;
    }
    this.onState("reconnecting");
    const wait = this.backoff * (0.75 + Math.random() / 2);
    this.backoff = Math.min(this.backoff * 2, 5000);
    this.timer = window.setTimeout(() => this.subscribe(), wait);
  }
}
