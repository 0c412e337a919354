// Package app is Shipgraph's composition root: the one place that builds
// the process from one configuration (package config's values). Serve
// builds the serving process once — Redis limits, the listening socket,
// the store, tracing, the file store, the resolver layer, the listening
// connection, the HTTP chain (key cache and live hub inside it) and the
// background components (background.go) — and takes it down in the
// reverse order. The other verbs (package verb) open only what they need
// through OpenStore, OpenFileStore and NewLogger.
//
// Adding a background component to serve is one entry in background();
// adding a setting is one declaration in config/settings.go plus its read
// here.
package app
