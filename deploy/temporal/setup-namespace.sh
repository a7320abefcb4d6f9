#!/bin/sh
# Once the server answers: the namespace Gatehouse uses, and Gatehouse's search attributes in it (the api and the
# worker also add any that are missing when they start). Safe to run again: only what is missing is created.
set -eu

namespace="${DEFAULT_NAMESPACE:-default}"
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  echo "waiting for Temporal at $TEMPORAL_ADDRESS"
  sleep 2
done

temporal operator namespace describe --namespace "$namespace" >/dev/null 2>&1 ||
  temporal operator namespace create --namespace "$namespace" --retention "${NAMESPACE_RETENTION:-30d}"

# A namespace just created reaches every part of the server when its cache refreshes: wait for it.
until existing=$(temporal operator search-attribute list --namespace "$namespace" 2>/dev/null); do
  echo "waiting for namespace $namespace"
  sleep 1
done
for name in GatehouseOrganization GatehouseOperation GatehouseResource GatehouseApiKey GatehouseInterface GatehouseDecision GatehouseReviewStatus; do
  if ! printf '%s\n' "$existing" | grep -qw "$name"; then
    temporal operator search-attribute create --namespace "$namespace" --name "$name" --type Keyword
  fi
done
echo "namespace $namespace and Gatehouse's search attributes are ready"
