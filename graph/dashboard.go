package graph

// DashboardQuery is the query dashboards send: a page of shipments with
// their containers, each container's terminal and port, holds, fees and last
// free day, and the shipment's custom fields. The playground opens with it,
// and the statement-count test holds it to a flat cost at any page size.
const DashboardQuery = `# A dashboard page: shipments with containers, terminals, holds and custom fields.
query Dashboard($first: Int = 100, $after: String) {
  shipments(first: $first, after: $after, orderBy: {field: POD_ETA_AT, direction: ASC}) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes {
      id
      billOfLadingNumber
      shippingLineScac
      podEtaAt
      customerName
      customFields { apiSlug value displayValue }
      containers {
        id
        number
        currentStatus
        pickupLfd
        availableForPickup
        holdsAtPodTerminal { name status }
        feesAtPodTerminal { type amount currencyCode }
        podTerminal { name firmsCode port { code name } }
      }
    }
  }
}
`
