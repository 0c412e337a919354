// Package redistest moved to testkit/redistest; this alias keeps branches written before
// the move compiling until they are merged. New code imports testkit/redistest.
package redistest

import kit "shipgraph/testkit/redistest"

type Server = kit.Server

var (
	Binary = kit.Binary
	Start  = kit.Start
)
