package httpapi

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"shipgraph/tracing"
)

// The span of an HTTP request (docs/tracing.md): otelhttp's, after the
// semantic conventions for HTTP servers, outermost in the chain so it
// continues a caller's W3C traceparent and sees the status the recoverer
// answers; accessLog puts the request id on it. Health checks and /metrics
// are not traced.

// RequestIDAttr is the request id of the access log, on the request's span.
const RequestIDAttr = attribute.Key("shipgraph.request_id")

func traced(tp trace.TracerProvider, next http.Handler) http.Handler {
	return otelhttp.NewHandler(next, "shipgraph",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(tracing.Propagator),
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool {
			switch r.URL.Path {
			case "/healthz", "/readyz", "/metrics":
				return false
			}
			return true
		}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + route(r.URL.Path) }),
	)
}

// route is the low-cardinality name of a path for span names: /graphql,
// /playground, or /v2/ and the resource collection.
func route(path string) string {
	if rest, ok := strings.CutPrefix(path, "/v2/"); ok {
		coll, _, _ := strings.Cut(rest, "/")
		return "/v2/" + coll
	}
	switch path {
	case "/graphql", "/playground", "/playground/", "/ops":
		return path
	}
	return "/"
}

// spanRequestID puts the request id on the request's span when it is traced.
func spanRequestID(r *http.Request, id string) {
	if sp := trace.SpanFromContext(r.Context()); sp.IsRecording() {
		sp.SetAttributes(RequestIDAttr.String(id))
	}
}
