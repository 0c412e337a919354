// Package replicatest moved to testkit/replicatest; this alias keeps branches written before
// the move compiling until they are merged. New code imports testkit/replicatest.
package replicatest

import kit "shipgraph/testkit/replicatest"

type (
	Options = kit.Options
	Standby = kit.Standby
)

var (
	Start   = kit.Start
	Cascade = kit.Cascade
)
