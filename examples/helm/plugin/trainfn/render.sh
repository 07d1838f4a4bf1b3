#!/bin/sh
# Helm 4 runs this with the chart's manifests on standard input and reads
# the post-rendered manifests from standard output: trainfn render - does
# the work. Arguments given with --post-renderer-args follow the -, as more
# files for trainfn to read.
#
# Helm 4 keeps a post-renderer plugin's standard error to itself: when the
# plugin fails, it only says that it "exited with error". So a failed
# render is answered with one YAML document that is no object, trainfn's
# messages as a block of text, and a zero status, which is the only way
# Helm reads it: Helm cannot apply text, so it fails, and its error quotes
# the text. trainfn prints nothing to standard output when it fails, so no
# manifest goes with it.

fail() {
  printf -- '--- |2\n'
  printf '%s\n' "$@" | sed 's/^/  /'
  exit 0
}

if ! command -v trainfn >/dev/null 2>&1; then
  fail "the trainfn post-renderer plugin runs trainfn from PATH, and there is none there:" \
    "build it (make build writes bin/trainfn) and add its directory to PATH"
fi

# trainfn's standard output goes straight to Helm; its standard error is
# kept, for the message.
exec 3>&1
messages=$(trainfn render - "$@" 2>&1 1>&3 3>&-)
status=$?
exec 3>&-
if [ "$status" -ne 0 ]; then
  fail "trainfn render failed (exit status $status):" "$messages"
fi
