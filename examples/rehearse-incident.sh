#!/usr/bin/env bash
# Rehearse examples/incident-runbook.sh on one machine: a standalone cosmosctl emulator
# whose East US (the write region) is first slow, then hung. Needs cosmosctl on PATH.
# EMULATOR_PORT is the emulator's port (8081; its regions take the next three).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
port=${EMULATOR_PORT:-8081}
export COSMOSCTL_ENDPOINT=http://127.0.0.1:$port
export RUNBOOK_CANARY='{"id":"runbook-canary","pk":"runbook","ttl":3600}'

log=$(mktemp)
cosmosctl emulator --port "$port" --latency none >/dev/null 2>"$log" &
emulator=$!
trap 'kill "$emulator" 2>/dev/null; wait "$emulator" 2>/dev/null || true; rm -f "$log"' EXIT
# Ready once it answers: no sleep. If it does not, its own words say why (a port taken).
cosmosctl emulator status --wait 30s >/dev/null || { cat "$log" >&2; exit 1; }
echo '{"id":"order-1","pk":"tenant-7","total":42}' | cosmosctl upsert -f - >/dev/null

echo "### East US slow: every request 800 ms late"
cosmosctl emulator latency --region "East US" --fixed 800ms >/dev/null
"$here/incident-runbook.sh"

echo "### East US hung: no request there is answered"
cosmosctl emulator fault add --region "East US" --effect hang >/dev/null
"$here/incident-runbook.sh"
