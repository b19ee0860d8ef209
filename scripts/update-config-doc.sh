#!/usr/bin/env bash
# Regenerates the generated sections of docs/config.md (`smmu-vp
# config-reference`: the schema compiled into smmu-vp) and docs/profiles.md
# (`smmu-vp profile doc`: every profile's values and provenance). A test
# fails when either differs.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/smmu-vp}
begin='<!-- BEGIN GENERATED REFERENCE -->'
end='<!-- END GENERATED REFERENCE -->'
# splice DOC COMMAND...: the output of COMMAND between DOC's markers.
splice() {
  local doc=$1
  shift
  local ref
  ref=$(mktemp)
  "$@" > "$ref"
  awk -v b="$begin" -v e="$end" -v ref="$ref" '
    $0 == b { print; while ((getline line < ref) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$doc" > "$doc.new"
  mv "$doc.new" "$doc"
  rm -f "$ref"
  echo "updated $doc"
}
splice docs/config.md "$cli" config-reference
splice docs/profiles.md "$cli" profile doc
