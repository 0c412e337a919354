// A subscription through the graphql-ws library's own client (the
// graphql-transport-ws protocol), for the browser-tagged Go test. Run
// through scripts/graphql-ws-client.sh, which installs the pinned packages
// next to a copy of this file.
//
//   node client.mjs WS_URL QUERY EVENTS
//
// The Authorization value comes from $GRAPHQL_WS_AUTHORIZATION and is sent
// in connection_init. Prints "connected" once acknowledged, one line
// "next <json>" per result, and exits 0 after EVENTS results; on an error
// or a close it prints "error <json>" or "closed <code> <reason>" and
// exits 1.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url, query, events] = process.argv.slice(2);
const want = Number(events);
let got = 0;

const client = createClient({
  url,
  webSocketImpl: WebSocket,
  lazy: false,
  retryAttempts: 0,
  connectionParams: { Authorization: process.env.GRAPHQL_WS_AUTHORIZATION ?? '' },
  on: {
    connected: () => console.log('connected'),
    closed: (ev) => {
      if (got < want) {
        console.log(`closed ${ev.code} ${ev.reason}`);
        process.exit(1);
      }
    },
  },
});

client.subscribe({ query }, {
  next: (result) => {
    console.log(`next ${JSON.stringify(result)}`);
    if (++got >= want) {
      client.dispose();
      process.exit(0);
    }
  },
  error: (err) => {
    const text = err instanceof Error ? err.message : (err && err.code !== undefined ? `${err.code} ${err.reason}` : JSON.stringify(err));
    console.log(`error ${text}`);
    process.exit(1);
  },
  complete: () => {
    console.log('complete');
    process.exit(got >= want ? 0 : 1);
  },
});
