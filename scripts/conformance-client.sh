#!/usr/bin/env bash
# The client under test for the official conformance suite's client scenarios
# (`conformance client --command "bash scripts/conformance-client.sh"`): the suite appends the server URL and
# names the scenario in $MCP_CONFORMANCE_SCENARIO. This drives subako's own CLI: for auth/* it signs in with
# `subako mcp login --no-browser` (the suite's authorization server redirects at once, so fetching the printed
# URL completes the sign-in), then lists the tools and calls the first one, as a user of `subako mcp` would.
set -u
url="${!#}"
here="$(cd "$(dirname "$0")/.." && pwd)"
subako=(node "$here/bin/subako.js")
export SUBAKO_HOME="$(mktemp -d)"   # a fresh credential store per scenario
trap 'rm -rf "$SUBAKO_HOME"' EXIT
auth=()
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  auth/*)
    log="$SUBAKO_HOME/login.log"
    "${subako[@]}" mcp login --url "$url" --name conformance --no-browser --timeout 20 >"$log" 2>&1 &
    login=$!
    for _ in $(seq 1 100); do
      authorize="$(grep -Eo 'https?://[^ ]+' "$log" | grep -v '127.0.0.1:[0-9]*/callback' | grep -F 'response_type=' | head -1)"
      [ -n "$authorize" ] && break
      kill -0 "$login" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "${authorize:-}" ] && curl -s -o /dev/null -L --max-time 10 "$authorize"
    wait "$login"; status=$?
    cat "$log" >&2
    [ "$status" -eq 0 ] || exit "$status"
    auth=(--oauth conformance)
    ;;
esac
tools="$("${subako[@]}" mcp tools --url "$url" "${auth[@]}" --json)" || exit $?
echo "$tools"
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  tools_call) exec "${subako[@]}" mcp call --url "$url" add_numbers '{"a":2,"b":3}' ;;
esac
first="$(printf '%s' "$tools" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const t=JSON.parse(s);const l=Array.isArray(t)?t:(t.tools??[]);process.stdout.write(l[0]?.name??"")}catch{}})')"
[ -n "$first" ] && "${subako[@]}" mcp call --url "$url" "${auth[@]}" "$first" '{}'
exit 0
