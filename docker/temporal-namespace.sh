#!/bin/sh
# Creates the namespace the service uses and registers the search attributes of
# lib/search-attributes.ts on it (the temporalio/server image does neither by itself). Keep the
# list below in step with SEARCH_ATTRIBUTES there.
set -eu
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"

until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do
  echo 'waiting for the Temporal server...'
  sleep 2
done

temporal operator namespace describe --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1 ||
  temporal operator namespace create --namespace "$NAMESPACE" --retention 7d --address "$TEMPORAL_ADDRESS"

# A new namespace reaches every frontend cache only after a few seconds.
until temporal operator search-attribute list --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" >/tmp/attributes 2>/dev/null; do
  echo "waiting for namespace $NAMESPACE..."
  sleep 2
done

for name in WorkspaceId AgentId CallStatus CallDirection; do
  if grep -qw "$name" /tmp/attributes; then
    echo "search attribute $name exists"
  else
    temporal operator search-attribute create --namespace "$NAMESPACE" --name "$name" --type Keyword \
      --address "$TEMPORAL_ADDRESS"
  fi
done
echo "namespace $NAMESPACE is ready"
