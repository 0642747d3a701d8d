#!/usr/bin/env bash
# An incident runbook: which region is in trouble, and do reads and writes still get
# through? It asks the account cosmosctl is configured for (COSMOSCTL_ENDPOINT and a key,
# or a profile) and needs nothing but cosmosctl: --jq picks the JSON apart. Every step is
# bounded in time. It exits non-zero only when no region serves the read; a write that
# fails is a finding, reported, not a failure of the runbook.
#
#   RUNBOOK_ID, RUNBOOK_PK  an item to read (default order-1 in tenant-7)
#   RUNBOOK_P99_MS          a region whose reads are slower than this at p99 is in trouble (500)
#   RUNBOOK_PROBE           how long to probe each region (10s)
#   RUNBOOK_TIMEOUT         the end-to-end timeout of each read and write (5s)
#   RUNBOOK_CANARY          a document to upsert as the write check (none: no write)
set -euo pipefail

id=${RUNBOOK_ID:-order-1}
pk=${RUNBOOK_PK:-tenant-7}
slow_ms=${RUNBOOK_P99_MS:-500}
probe_for=${RUNBOOK_PROBE:-10s}
timeout=${RUNBOOK_TIMEOUT:-5s}

echo "== the account now"
write_region=$(cosmosctl regions --e2e-timeout "$timeout" --jq '.effective_write_regions[0]')
echo "write region: $write_region"

echo "== regions in trouble ($probe_for of reads of the item in each: p99 over ${slow_ms} ms, errors or timeouts)"
sick=$(cosmosctl probe --id "$id" --pk "$pk" --duration "$probe_for" --jq "select(.type == \"summary\") | .regions[]
  | select(.timeouts > 0 or .errors > 0 or (.p99_ms // 1e9) > $slow_ms) | .region" | paste -sd, -)
echo "in trouble: ${sick:-none}"

echo "== a read around them"
exclude=()
if [ -n "$sick" ]; then exclude=(--exclude "$sick"); fi
cosmosctl read "$id" --pk "$pk" "${exclude[@]}" --e2e-timeout "$timeout" \
  --jq '"read: \(.status_code) from \(.diagnostics.winning_region) in \(.diagnostics.duration_ms) ms"'

echo "== the read as an application with hedging makes it (no region excluded)"
cosmosctl read "$id" --pk "$pk" --hedge-threshold 100ms --e2e-timeout "$timeout" \
  --jq '"hedged read: \(.status_code) from \(.diagnostics.winning_region) in \(.diagnostics.duration_ms) ms"'

if [ -n "${RUNBOOK_CANARY:-}" ]; then
  echo "== a write (to $write_region)"
  if out=$(cosmosctl upsert -f - --e2e-timeout "$timeout" --jq '"write: \(.status_code) in \(.diagnostics.duration_ms) ms"' 2>&1 <<<"$RUNBOOK_CANARY"); then
    echo "$out"
  else
    code=$?
    echo "write: FAILED (exit $code): writes go to $write_region only; they resume when it recovers or the account fails over"
    echo "  $(tail -n 1 <<<"$out")"
  fi
fi

echo "== what cosmosctl now avoids"
cosmosctl health -o tsv --no-headers
