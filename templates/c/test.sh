#!/usr/bin/env bash
# Builds the package and calls its tool the way an agent would; exits non-zero at the first wrong answer.
# Run it from anywhere: ./test.sh. It runs the `subako` on PATH (`npm link` in a clone of subako puts it
# there), else the subako this project was made with; SUBAKO names another command.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if [[ -z "${SUBAKO:-}" ]] && ! command -v subako > /dev/null; then SUBAKO="node {{sdk_dir}}/../../bin/subako.js"; fi
read -r -a subako <<< "${SUBAKO:-subako}"

expect() { # expect <what> <wanted substring> <actual>
  if [[ "$3" != *"$2"* ]]; then
    printf 'FAIL %s\n  wanted: %s\n  got:    %s\n' "$1" "$2" "$3" >&2
    exit 1
  fi
  printf 'ok   %s\n' "$1"
}

"${subako[@]}" build .
expect 'greet answers structured content' '{"message":"Hello, Ada!"}' \
  "$("${subako[@]}" call . greet '{"name":"Ada","excited":true}')"
expect 'a missing argument is a tool error naming it' 'argument "name" is missing' \
  "$("${subako[@]}" call . greet '{}')"
expect 'a mistyped argument is a tool error naming it' 'argument "excited" must be a boolean' \
  "$("${subako[@]}" call . greet '{"name":"Ada","excited":"yes"}')"
