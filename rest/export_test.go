package rest

import "shipgraph/rest/jsonapi"

// SetReflectAttributes makes documents write attributes through
// encoding/json (true) or their generated writers (false).
func SetReflectAttributes(on bool) { jsonapi.ReflectAttributes.Store(on) }
