package rest

// SetReflectAttributes makes documents write attributes through
// encoding/json (true) or the writers of encode.go (false).
func SetReflectAttributes(on bool) { reflectAttributes.Store(on) }
