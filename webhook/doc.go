// Package webhook is the webhook engine: it turns the durable change log
// (db.ReadChangeLog) into webhook notifications (fan-out) and delivers them
// (dispatcher), at least once, signed, with retries, from any number of
// processes sharing one database.
//
//   - events.go: which public events one logged change raises (pure).
//   - fanout.go: one loop per process; one process at a time reads the log
//     from the persisted cursor and inserts the notifications of every
//     subscribed webhook in the transaction that advances the cursor.
//   - dispatcher.go: a global pool of workers claims due notifications
//     (FOR UPDATE SKIP LOCKED, with a claim that expires), bounded per
//     endpoint, POSTs the signed payload, records every attempt and
//     schedules retries with exponential backoff and full jitter.
//   - guard.go: the dialer refuses private, loopback, link-local and
//     metadata addresses at connect time (netguard.Control: DNS rebinding).
//
// SQL lives in db/ (webhook_delivery.go); the payload document is rendered
// by the /v2 code, handed in as a function (Config.Payload), so this
// package imports neither rest/ nor graph/.
package webhook
