// The composition check of scripts/federation-gateway.sh: a customers
// subgraph extending Shipgraph's Shipment, an Apollo Gateway over both, and
// two queries that cross them. Arguments: Shipgraph's URL, shipment ids.
import { ApolloServer } from "@apollo/server";
import { startStandaloneServer } from "@apollo/server/standalone";
import { ApolloGateway, IntrospectAndCompose, RemoteGraphQLDataSource } from "@apollo/gateway";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse } from "graphql";

const [shipgraphURL, ...shipmentIDs] = process.argv.slice(2);
const authorization = process.env.SHIPGRAPH_AUTHORIZATION || "";

// The customers subgraph: each customer has some of the shipments, and a
// shipment knows its customer (crmCustomer: Shipgraph's own Shipment.customer
// is a party of its account, another type).
const customers = [
  { id: "c1", name: "Initech", shipmentIDs: shipmentIDs.filter((_, i) => i % 2 === 0) },
  { id: "c2", name: "Hooli", shipmentIDs: shipmentIDs.filter((_, i) => i % 2 === 1) },
];
const customerOf = (shipmentID) => customers.find((c) => c.shipmentIDs.includes(shipmentID)) || null;

const typeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Customer @key(fields: "id") {
    id: ID!
    name: String!
    shipments: [Shipment!]!
  }
  type Shipment @key(fields: "id") {
    id: ID!
    crmCustomer: Customer
  }
  type Query {
    customers: [Customer!]!
  }
`);
const resolvers = {
  Query: { customers: () => customers },
  Customer: {
    __resolveReference: (ref) => customers.find((c) => c.id === ref.id),
    shipments: (c) => c.shipmentIDs.map((id) => ({ __typename: "Shipment", id })),
  },
  Shipment: {
    __resolveReference: (ref) => ({ id: ref.id }),
    crmCustomer: (s) => customerOf(s.id),
  },
};

const sub = new ApolloServer({ schema: buildSubgraphSchema([{ typeDefs, resolvers }]) });
const { url: customersURL } = await startStandaloneServer(sub, { listen: { host: "127.0.0.1", port: 0 } });

// Shipgraph wants its API key on every request, introspection included.
const headers = { Authorization: authorization };
const gateway = new ApolloGateway({
  supergraphSdl: new IntrospectAndCompose({
    subgraphs: [
      { name: "shipgraph", url: shipgraphURL },
      { name: "customers", url: customersURL },
    ],
    introspectionHeaders: (service) => (service.name === "shipgraph" ? headers : {}),
  }),
  buildService: ({ name, url }) =>
    new RemoteGraphQLDataSource({
      url,
      willSendRequest({ request }) {
        if (name === "shipgraph") request.http.headers.set("Authorization", authorization);
      },
    }),
});
const server = new ApolloServer({ gateway });
let gatewayURL;
try {
  ({ url: gatewayURL } = await startStandaloneServer(server, { listen: { host: "127.0.0.1", port: 0 } }));
} catch (e) {
  console.error("composition failed:", e.message);
  await sub.stop();
  process.exit(1);
}

const queries = {
  // From the customers subgraph into Shipgraph's: _entities on Shipgraph.
  customers: `{ customers { name shipments { id billOfLadingNumber containers { number } crmCustomer { name } } } }`,
  // From Shipgraph into the customers subgraph: _entities there.
  shipments: `query($first: Int) { shipments(first: $first) { nodes { id billOfLadingNumber crmCustomer { name } } } }`,
};
let failed = false;
for (const [name, query] of Object.entries(queries)) {
  const res = await fetch(gatewayURL, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query, variables: { first: 3 } }),
  });
  const body = await res.json();
  console.log(JSON.stringify({ query: name, status: res.status, ...body }));
  if (res.status !== 200 || body.errors) failed = true;
}
await server.stop();
await sub.stop();
process.exit(failed ? 1 : 0);
