#!/usr/bin/env bash
# Checks that docs/CONFIGURATION.md documents exactly the settings `countersign serve --help` prints: the
# environment variables the help lists (a name at the start of a line) and its options (but --help and
# --version), against the names in backticks in the first cell of the page's table rows. Prints the
# names that differ and exits 1 when the two sets are not the same.
#
# Usage: scripts/check-configuration-doc.sh COUNTERSIGN_BIN [DOC]   (DOC: default docs/CONFIGURATION.md)
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ ! -x "$1" ]; then
  echo "usage: $0 <countersign executable> [configuration doc]" >&2
  exit 2
fi
bin=$1
doc=${2:-$(cd "$(dirname "$0")/.." && pwd)/docs/CONFIGURATION.md}
[ -f "$doc" ] || { echo "$doc: no such file" >&2; exit 2; }

# A wide terminal, so that ArgumentParser prints each variable on one line whatever the real one is.
help=$(COLUMNS=1000 "$bin" serve --help)

from_help=$(
  {
    # Variables: an upper-case name with an underscore, indented, at the start of a line (a name cut short
    # by the help's column, ending in "_", is read as it is printed).
    printf '%s\n' "$help" | sed -nE 's/^[[:space:]]+([A-Z][A-Z0-9]*(_[A-Z0-9]*)+)([[:space:]].*)?$/\1/p'
    # Options: "  --name <value>   help" or "  -x, --name   help".
    printf '%s\n' "$help" | sed -nE 's/^[[:space:]]+(-[A-Za-z], )?(--[a-z0-9][a-z0-9-]*).*$/\2/p'
  } | grep -vxE -- '--help|--version' | sort -u
)
from_doc=$(
  # The first cell of every table row; in it, each backticked variable or option name.
  sed -nE 's/^[[:space:]]*\|([^|]*)\|.*$/\1/p' "$doc" | grep -oE '`[^`]+`' | tr -d '`' |
    sed -nE 's/^([A-Z][A-Z0-9]*(_[A-Z0-9]+)+|--[a-z0-9][a-z0-9-]*)([[:space:]].*)?$/\1/p' | sort -u
)

if [ -z "$from_help" ]; then
  echo "Found no variable or option in \`$bin serve --help\`: has its layout changed?" >&2
  exit 1
fi
only_help=$(comm -23 <(printf '%s\n' "$from_help") <(printf '%s\n' "$from_doc"))
only_doc=$(comm -13 <(printf '%s\n' "$from_help") <(printf '%s\n' "$from_doc"))
if [ -n "$only_help" ] || [ -n "$only_doc" ]; then
  [ -z "$only_help" ] || echo "In \`serve --help\` but not in $doc: $(echo $only_help)" >&2
  [ -z "$only_doc" ] || echo "In $doc but not in \`serve --help\`: $(echo $only_doc)" >&2
  exit 1
fi
echo "Configuration doc: $(printf '%s\n' "$from_help" | wc -l) settings, the same as \`serve --help\`"
