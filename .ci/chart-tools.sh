#!/usr/bin/env bash
# What the chart checks (test/unit/helm-chart.test.ts) need, at the versions of chart-tools.env:
# helm, kubeconform and controller-gen built with `go install` into ~/go/bin, and the Kubernetes
# and ServiceMonitor JSON schemas generated into a cache directory (scripts/kube-schemas.ts).
# Everything comes from the Go module proxy. Idempotent: with everything in place it takes
# seconds; a new machine builds the tools once (helm takes several minutes on 2 cores).
#   bash .ci/chart-tools.sh [tools|schemas]   (default: both; the schemas need the npm packages)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"
set -a
# shellcheck source=chart-tools.env
. .ci/chart-tools.env
set +a

# The module version a Go binary was built from ("" when it is missing).
built_version() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3; exit }'; }

install_tool() { # name, package, version
  local bin
  bin="$(go env GOPATH)/bin/$1"
  if [ "$(built_version "$bin")" != "$3" ]; then
    echo "Building $1 $3 (go install $2@$3)…"
    go install "$2@$3"
  fi
}

if [ "${1:-}" != schemas ]; then
  install_tool helm helm.sh/helm/v4/cmd/helm "$HELM_VERSION"
  install_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
  install_tool controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen "$CONTROLLER_GEN_VERSION"
fi
if [ "${1:-}" != tools ]; then
  npx tsx scripts/kube-schemas.ts
fi
