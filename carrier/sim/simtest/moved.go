// Package simtest moved to testkit/simtest; this alias keeps branches written before
// the move compiling until they are merged. New code imports testkit/simtest.
package simtest

import kit "shipgraph/testkit/simtest"

type (
	Clock  = kit.Clock
	Server = kit.Server
)

var (
	Epoch = kit.Epoch
	Start = kit.Start
)
