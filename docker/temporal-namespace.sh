#!/bin/sh
# Creates the namespace the service uses and registers the search attributes of
# lib/temporal/search-attributes.ts on it (a Temporal server does neither by itself). The same
# commands for both users:
#   docker-compose.yml      the temporal-namespace service, in the temporalio/admin-tools image
#   npm run start:cluster   scripts/cluster/temporal-server.ts, with the project's temporal CLI
#                           (TEMPORAL_CLI names it, SEARCH_ATTRIBUTES lists the attributes)
# Safe to rerun: what exists is left as it is.
# Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE (default default), TEMPORAL_NAMESPACE_RETENTION
# (default 7d: how long closed workflows stay inspectable; the calls themselves live in the
# service's database).
set -eu
CLI="${TEMPORAL_CLI:-temporal}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
RETENTION="${TEMPORAL_NAMESPACE_RETENTION:-7d}"
# Keep the default in step with SEARCH_ATTRIBUTES in lib/temporal/search-attributes.ts (a test checks).
ATTRIBUTES="${SEARCH_ATTRIBUTES:-WorkspaceId AgentId CallStatus CallDirection CampaignStatus}"
LISTED="$(mktemp)"
trap 'rm -f "$LISTED"' EXIT

until "$CLI" operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  echo 'waiting for the Temporal server...'
  sleep 2
done

if "$CLI" operator namespace describe --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE exists"
else
  "$CLI" operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" --address "$TEMPORAL_ADDRESS"
fi

# A new namespace reaches every frontend cache only after a few seconds.
until "$CLI" operator search-attribute list --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" >"$LISTED" 2>/dev/null; do
  echo "waiting for namespace $NAMESPACE..."
  sleep 2
done

for name in $ATTRIBUTES; do
  if grep -qw "$name" "$LISTED"; then
    echo "search attribute $name exists"
  else
    "$CLI" operator search-attribute create --namespace "$NAMESPACE" --name "$name" --type Keyword \
      --address "$TEMPORAL_ADDRESS"
  fi
done
echo "namespace $NAMESPACE is ready"
