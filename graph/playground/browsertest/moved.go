// Package browsertest moved to testkit/browsertest; this alias keeps branches written before
// the move compiling until they are merged. New code imports testkit/browsertest.
package browsertest

import kit "shipgraph/testkit/browsertest"

type (
	Options = kit.Options
	Result  = kit.Result
	Browser = kit.Browser
)

const (
	DefaultChromium       = kit.DefaultChromium
	ReadySelector         = kit.ReadySelector
	ExecuteButtonSelector = kit.ExecuteButtonSelector
	ResultSelector        = kit.ResultSelector
)

var (
	RunExampleQuery = kit.RunExampleQuery
	Screenshot      = kit.Screenshot
	Run             = kit.Run
	Start           = kit.Start
	RunSubscription = kit.RunSubscription
)
