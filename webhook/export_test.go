package webhook

import "shipgraph/db"

// Deliver makes one attempt of a notification claimed by other means and
// records it (the benchmark of delivery as a River job).
func (d *Dispatcher) Deliver(w *db.WebhookDelivery) { d.deliver(w) }
