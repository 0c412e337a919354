// A query with @defer read by Apollo Client 4 (incremental delivery over
// multipart/mixed), for the browser-tagged Go test. Run through
// scripts/apollo-defer-client.sh, which installs the pinned packages next
// to a copy of this file.
//
//   node client.mjs URL QUERY
//
// The Authorization value comes from $APOLLO_AUTHORIZATION. Prints one line
// "<dataState> <json data>" per result the client emits ("streaming" while
// deferred parts are outstanding, "complete" at the end) and exits 0 after
// the complete one; on an error it prints "error <message>" and exits 1.
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';

const [url, query] = process.argv.slice(2);

const client = new ApolloClient({
  link: new HttpLink({ uri: url, headers: { Authorization: process.env.APOLLO_AUTHORIZATION ?? '' } }),
  cache: new InMemoryCache(),
  // Apollo Client 4 reads @defer only through an incremental handler; the
  // 2022-08-24 draft is the format the server writes (deferSpec=20220824).
  incrementalHandler: new Defer20220824Handler(),
});

const fail = (msg) => {
  console.log(`error ${msg}`);
  process.exit(1);
};
const timer = setTimeout(() => fail('timed out'), 60000);

client.watchQuery({ query: gql(query), fetchPolicy: 'network-only' }).subscribe({
  next: (r) => {
    if (r.error) fail(r.error.message);
    if (r.dataState !== 'streaming' && r.dataState !== 'complete') return; // loading, no data yet
    console.log(`${r.dataState} ${JSON.stringify(r.data)}`);
    if (r.dataState === 'complete') {
      clearTimeout(timer);
      process.exit(0);
    }
  },
  error: (e) => fail(e.message),
});
