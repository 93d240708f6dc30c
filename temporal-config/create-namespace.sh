#!/bin/sh
# Creates the namespace and the search attributes operators filter calls by in the Web UI.
set -eu
ADDR="${TEMPORAL_ADDRESS:-temporal:7233}"
NS="${TEMPORAL_NAMESPACE:-default}"
until temporal operator cluster health --address "$ADDR" >/dev/null 2>&1; do sleep 2; done
temporal operator namespace describe -n "$NS" --address "$ADDR" >/dev/null 2>&1 \
  || temporal operator namespace create -n "$NS" --retention 30d --address "$ADDR"
# name:type, as in src/shared/search-attributes.ts
for attr in AgentName:Keyword CallStatus:Keyword Direction:Keyword PhoneNumber:Keyword CallSuccess:Bool; do
  temporal operator search-attribute create --namespace "$NS" --address "$ADDR" --name "${attr%%:*}" --type "${attr#*:}" 2>/dev/null || true
done
echo "namespace $NS ready"
