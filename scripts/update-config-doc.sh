#!/usr/bin/env bash
# Regenerates the reference section of docs/config.md from the schema compiled
# into smmu-vp (`smmu-vp config-reference`). A test fails when they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/smmu-vp}
doc=docs/config.md
begin='<!-- BEGIN GENERATED REFERENCE -->'
end='<!-- END GENERATED REFERENCE -->'
ref=$(mktemp)
"$cli" config-reference > "$ref"
awk -v b="$begin" -v e="$end" -v ref="$ref" '
  $0 == b { print; while ((getline line < ref) > 0) print line; skip = 1; next }
  $0 == e { skip = 0 }
  !skip { print }' "$doc" > "$doc.new"
mv "$doc.new" "$doc"
rm -f "$ref"
echo "updated $doc"
