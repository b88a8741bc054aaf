#!/bin/sh
# Program action in plain sh: echoes its input as the result, or fails.
# Input "missing" -> a Status error line (NOT_FOUND);
# input "crash"   -> diagnostics on stderr and exit status 3, which the
#                    runtime reports as INTERNAL with the stderr tail.
IFS= read -r input
case "$input" in
  '"missing"')
    echo '{"error": {"status": "NOT_FOUND", "message": "nothing called missing"}}' ;;
  '"crash"')
    echo "check.sh: crashing on purpose" >&2
    exit 3 ;;
  *)
    printf '{"result": %s}\n' "$input" ;;
esac
