package tracing

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport makes each request a client span, a child of the span in the
// request's context (a trace of its own when there is none), and sends the
// span's W3C traceparent and tracestate with it, so the business system
// can put its work under the console's. The span ends when the answer's
// body is read to its end or closed. Without a provider (Install) it makes
// no span and passes on only a span context the request already carries.
// base nil means http.DefaultTransport.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return propagating{base: base}
}

type propagating struct{ base http.RoundTripper }

func (p propagating) RoundTrip(r *http.Request) (*http.Response, error) {
	if current.Load() == nil {
		if trace.SpanContextFromContext(r.Context()).IsValid() {
			r = r.Clone(r.Context())
			propagation.TraceContext{}.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
		}
		return p.base.RoundTrip(r)
	}
	name, _ := r.Context().Value(operationKey{}).(string)
	if name == "" {
		name = "HTTP " + r.Method
	}
	ctx, span := tracer().Start(r.Context(), name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(requestAttributes(r)...))
	r = r.Clone(ctx)
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(r.Header))
	res, err := p.base.RoundTrip(r)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return res, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", res.StatusCode))
	if res.StatusCode >= 400 {
		span.SetStatus(codes.Error, res.Status)
	}
	if res.Body == nil || res.Body == http.NoBody {
		span.End()
		return res, nil
	}
	res.Body = &endingBody{ReadCloser: res.Body, span: span}
	return res, nil
}

// requestAttributes are a request's attributes in OpenTelemetry's HTTP
// conventions, without its query: a query may name a customer.
func requestAttributes(r *http.Request) []attribute.KeyValue {
	host, port := r.URL.Hostname(), r.URL.Port()
	attrs := []attribute.KeyValue{attribute.String("http.request.method", r.Method),
		attribute.String("url.scheme", r.URL.Scheme), attribute.String("server.address", host),
		attribute.String("url.path", r.URL.Path)}
	if n, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, attribute.Int("server.port", n))
	}
	return attrs
}

// endingBody ends the request's span when its answer has been read.
type endingBody struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (b *endingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.end()
	}
	return n, err
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

func (b *endingBody) end() { b.once.Do(func() { b.span.End() }) }

type operationKey struct{}

// Operation names the client spans of the requests made with ctx (an
// OAuth token request, "oauth2.token"), which are otherwise named
// "HTTP <method>".
func Operation(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, operationKey{}, name)
}

// Handler makes a traced service of h: each request is a server span of
// tp's, continuing the trace context the request carries (W3C traceparent
// and tracestate), so the caller's client span is its parent. The span is
// named "HTTP <method>" until the handler names it after its route
// (trace.SpanFromContext(ctx).SetName). A nil tp serves h as it is.
func Handler(tp trace.TracerProvider, h http.Handler) http.Handler {
	if tp == nil {
		return h
	}
	tr := tp.Tracer("countersign/tracing")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		attrs := []attribute.KeyValue{attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)}
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			attrs = append(attrs, attribute.String("client.address", host))
		}
		ctx, span := tr.Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		sw := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(sw, r.WithContext(ctx))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	})
}

// Within starts a span named name under the span in ctx, of the same
// provider: a traced service's own work inside a request (Handler), such
// as a database transaction. Outside a traced request it records nothing.
// End it.
func Within(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	return parent.TracerProvider().Tracer("countersign/tracing").Start(ctx, name, trace.WithAttributes(attrs...))
}

// statusRecorder keeps the status for the server span; Unwrap lets
// http.ResponseController reach the connection beneath.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
