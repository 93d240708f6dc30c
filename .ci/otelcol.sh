#!/usr/bin/env bash
# The OpenTelemetry Collector the tracing test (test/integration/otel-traces.test.ts) sends spans
# to: tools/otelcol/ (the upstream collector core with its OTLP receiver and the contrib file
# exporter, at the versions of tools/otelcol/go.mod), built with Go into ~/go/bin/vap-otelcol.
# Idempotent: rebuilt only when tools/otelcol/ changed (the binary's stamp is a hash of its files);
# a new machine builds it once (5–13 minutes on 2 busy cores, docs/development.md, so .ci/run
# builds it while npm installs). Everything comes from the Go module proxy.
#   bash .ci/otelcol.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"

bin="$(go env GOPATH)/bin/vap-otelcol"
stamp="$(cat tools/otelcol/go.mod tools/otelcol/go.sum tools/otelcol/*.go | sha256sum | cut -c1-16)"
if [ -x "$bin" ] && [ "$(cat "$bin.stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
echo "Building the OpenTelemetry Collector for the tracing test (tools/otelcol → $bin)…"
start=$(date +%s)
(cd tools/otelcol && go build -trimpath -ldflags='-s -w' -o "$bin" .)
echo "$stamp" > "$bin.stamp"
echo "Built vap-otelcol in $(( $(date +%s) - start )) s"
