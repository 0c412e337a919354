// Package tracing sets up OpenTelemetry traces from the standard OTEL_*
// environment variables (docs/tracing.md): with none of them set, tracing
// is off and nothing of it runs — the chain adds no HTTP span, the GraphQL
// handler no operation middleware, and the store's statement hook finds no
// span in the context (a context lookup, no allocation).
//
// With tracing on, spans are one per HTTP request (httpapi, otelhttp's
// semantic conventions for HTTP servers, continuing a caller's W3C
// traceparent), one per GraphQL operation (graph/gqlhttp) and one per SQL
// statement (db); the statement and operation spans are made by the tracer
// provider of the span they are children of, so only this package and
// the composition root (app/serve.go) know the provider.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName is service.name unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const ServiceName = "shipgraph"

// Configured reports whether the environment asks for traces: some
// OTEL_* variable is set, the SDK is not disabled (OTEL_SDK_DISABLED=true)
// and the traces exporter is not "none".
func Configured(getenv func(string) string, environ []string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	for _, kv := range environ {
		if strings.HasPrefix(kv, "OTEL_") {
			return true
		}
	}
	return false
}

// Provider is the tracer provider of a process with tracing on.
type Provider struct {
	*sdktrace.TracerProvider
}

// FromEnv builds the tracer provider the OTEL_* variables describe, or nil
// when they ask for none (Configured). Spans are batched and exported by
// OTLP over HTTP (protobuf) to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), sampled as
// OTEL_TRACES_SAMPLER says (default: parent-based, always on). It also
// installs the provider and the W3C trace-context and baggage propagators
// as OpenTelemetry's globals, for libraries that use them.
func FromEnv(ctx context.Context) (*Provider, error) {
	if !Configured(os.Getenv, os.Environ()) {
		return nil, nil
	}
	if e := os.Getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: only otlp (or none) is supported", e)
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return nil, fmt.Errorf("OTLP protocol %s: only http/protobuf is supported", proto)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	return New(ctx, sdktrace.NewBatchSpanProcessor(exp))
}

// New builds a tracer provider over processor (tests pass a synchronous
// one over an in-memory exporter), with the resource of the environment
// and installs it as the global provider and the W3C propagators as the
// global propagator.
func New(ctx context.Context, processor sdktrace.SpanProcessor) (*Provider, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(ServiceName)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(processor))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(Propagator)
	return &Provider{tp}, nil
}

// Propagator reads and writes W3C traceparent, tracestate and baggage.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// TracerProvider is p's provider, or nil for a nil p (tracing off).
func (p *Provider) Provider() trace.TracerProvider {
	if p == nil {
		return nil
	}
	return p.TracerProvider
}

// Shutdown exports the spans still buffered; nil p does nothing.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.TracerProvider.Shutdown(ctx)
}
