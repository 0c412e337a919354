// Package tracking is the tracking engine: durable River jobs that poll
// carriers (DCSA Track & Trace v2.2, carrier/dcsa) for the numbers of
// tracking requests and write what they find through db: the polls of one
// account that finish together in one transaction (apply.go).
//
//   - A poll job (PollArgs: account and request id; unique per request
//     while available, pending, scheduled, retryable or running) reads its
//     request, asks the carrier's connector for the events of its number
//     (outside any transaction), maps them (mapping.go: ONE table of DCSA
//     codes → public event names) and queues them for its account's next
//     batch (apply.go: the lifecycle rules; db.TrackingTx: the statements,
//     in the common case one for the whole batch, db.ApplyPolls), which
//     locks the requests FOR UPDATE SKIP LOCKED.
//   - A periodic job (leader-elected by River) claims the requests whose
//     next_poll_at has passed (db.ClaimDueTrackingRequests, account by
//     account) and enqueues
//     their polls in the same transaction: a request inserted by any path,
//     plain SQL included, is picked up; a poll lost with its process is
//     enqueued again once its lease (next_poll_at moved ahead) passes.
//   - Carrier failures are counted on the request (is_retrying,
//     retry_count) and retried with exponential backoff through
//     next_poll_at; docs/tracking.md has the lifecycle and the settings.
//
// Per-carrier rate and concurrency limits hold over every instance with
// sharedlimit (Redis), or per process without it.
package tracking
