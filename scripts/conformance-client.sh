#!/usr/bin/env bash
# The client under test for the official conformance suite's client scenarios
# (`conformance client --command "bash scripts/conformance-client.sh"`): the suite appends the server URL,
# names the scenario in $MCP_CONFORMANCE_SCENARIO and puts scenario data (a pre-registered client, the tool
# calls to make) in $MCP_CONFORMANCE_CONTEXT. This drives subako's own CLI as a user would: for auth/* it
# signs in with `subako mcp login --no-browser` (the suite's authorization server redirects at once, so
# fetching the printed URL completes the sign-in), lists the tools, then makes the calls the context asks
# for (sent as given, --no-check: the suite's arguments are its to judge), else calls valid_tool when listed,
# else the first tool; the MRTR scenario calls every tool, answering its form with --answer. A call refused for insufficient_scope is
# stepped up with `subako mcp login --scope` once and retried.
# The client-credentials scenarios log in as a machine (--client-credentials with the context's client id and its
# secret through SUBAKO_OAUTH_CLIENT_SECRET, or its private key written to a file for --private-key-file).
set -u
url="${!#}"
here="$(cd "$(dirname "$0")/.." && pwd)"
subako=(node "$here/bin/subako.js")
export SUBAKO_HOME="$(mktemp -d)"   # a fresh credential store per scenario
trap 'rm -rf "$SUBAKO_HOME"' EXIT
scenario="${MCP_CONFORMANCE_SCENARIO:-}"
context="${MCP_CONFORMANCE_CONTEXT:-{\}}"
field() { printf '%s' "$context" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];if(v!==undefined)process.stdout.write(typeof v==="string"?v:JSON.stringify(v))})' "$1"; }

login() { # extra login flags in "$@"
  local log="$SUBAKO_HOME/login.log" authorize="" pid status
  "${subako[@]}" mcp login --url "$url" --name conformance --no-browser --timeout 20 "$@" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    authorize="$(grep -Eo 'https?://[^ ]+' "$log" | grep -F 'response_type=' | head -1)"
    [ -n "$authorize" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$authorize" ] && curl -s -o /dev/null -L --max-time 10 "$authorize"
  wait "$pid"; status=$?
  cat "$log" >&2
  return "$status"
}

auth=()
case "$scenario" in
  auth/*)
    flags=()
    client_id="$(field client_id)"; client_secret="$(field client_secret)"
    [ "$scenario" = auth/pre-registration ] && [ -n "$client_id" ] && flags+=(--client-id "$client_id")
    [ "$scenario" = auth/pre-registration ] && [ -n "$client_secret" ] && flags+=(--client-secret "$client_secret")
    # The suite's CIMD scenario expects this client's metadata document at this (unreachable) URL.
    [ "$scenario" = auth/basic-cimd ] && flags+=(--client-metadata-url https://conformance-test.local/client-metadata.json)
    case "$scenario" in
      auth/client-credentials-*)
        flags=(--client-credentials --client-id "$client_id")
        pem="$(field private_key_pem)"
        if [ -n "$pem" ]; then
          printf '%s\n' "$pem" >"$SUBAKO_HOME/client-key.pem"
          flags+=(--private-key-file "$SUBAKO_HOME/client-key.pem" --private-key-alg "$(field signing_algorithm)")
        else
          export SUBAKO_OAUTH_CLIENT_SECRET="$client_secret"  # kept out of the process list
        fi
        ;;
    esac
    login "${flags[@]}" || exit $?
    auth=(--oauth conformance)
    ;;
esac

# Runs a `subako mcp` command with the credential; when it fails the way a user would answer by signing in
# again (insufficient scope: log in with the scope it names; a refused credential: the CLI says to run
# `subako mcp login` again), does that once and retries.
authed() {
  local out status scope err="$SUBAKO_HOME/mcp.err"
  out="$("${subako[@]}" mcp "$1" --url "$url" "${auth[@]}" "${@:2}" 2>"$err")"; status=$?
  cat "$err" >&2
  if [ "$status" -ne 0 ] && [ "${#auth[@]}" -gt 0 ]; then
    if grep -Eqi 'insufficient.scope' <<<"$out$(cat "$err")"; then
      scope="$(grep -Eo 'the scope "[^"]+"' <<<"$out$(cat "$err")" | head -1 | sed -E 's/.*"([^"]+)"/\1/')"
      printf '%s\n' "$out" >&2; login ${scope:+--scope "$scope"} || return $?
    elif grep -Fq 'subako mcp login' <<<"$out$(cat "$err")"; then
      printf '%s\n' "$out" >&2; login || return $?
    else
      printf '%s\n' "$out"; return "$status"
    fi
    out="$("${subako[@]}" mcp "$1" --url "$url" "${auth[@]}" "${@:2}")"; status=$?
  fi
  printf '%s\n' "$out"
  return "$status"
}
call() { authed call "$@"; }

tools="$(authed tools --json)" || { printf '%s\n' "$tools"; exit 1; }
printf '%s\n' "$tools"
calls="$(field toolCalls)"
if [ -n "$calls" ]; then
  printf '%s' "$calls" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const c of JSON.parse(s))console.log(c.name+"\t"+JSON.stringify(c.arguments??{}))})' |
    while IFS=$'\t' read -r name args; do call "$name" "$args" --no-check || exit $?; done
  exit $?
fi
if [ "$scenario" = sep-2322-client-request-state ]; then
  # Every tool, each input request answered as a person accepting the form would (--answer), so the suite sees
  # requestState echoed, no state invented, and nothing carried to another call.
  for name in $(printf '%s' "$tools" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=JSON.parse(s);for(const x of (Array.isArray(t)?t:(t.tools??[])))console.log(x.name)})'); do
    call "$name" '{}' --answer 'confirm={"action":"accept","content":{"confirmed":true}}' || exit $?
  done
  exit 0
fi
if [ "$scenario" = json-schema-2020-12-preservation ]; then
  # Hand back the inputSchema exactly as `subako mcp tools` showed it, so the suite sees what we preserved.
  schema="$(printf '%s' "$tools" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=JSON.parse(s);const l=Array.isArray(t)?t:(t.tools??[]);process.stdout.write(JSON.stringify({schema:l.find(x=>x.name==="json_schema_2020_12_tool")?.inputSchema}))})')"
  call json_schema_echo "$schema"; exit $?
fi
[ "$scenario" = tools_call ] && { call add_numbers '{"a":2,"b":3}'; exit $?; }
# name<TAB>arguments for each tool, the arguments filling its required properties with plain values.
plan="$(printf '%s' "$tools" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=JSON.parse(s);const l=Array.isArray(t)?t:(t.tools??[]);
const plain={string:"x",integer:1,number:1,boolean:true};
for(const x of l){const sc=x.inputSchema??{};const a={};for(const k of sc.required??[])a[k]=plain[sc.properties?.[k]?.type]??"x";console.log(x.name+"\t"+JSON.stringify(a))}})')"
pick="$(grep -P '^valid_tool\t' <<<"$plan" || head -1 <<<"$plan")"
[ -n "$pick" ] && { call "${pick%%$'\t'*}" "${pick#*$'\t'}"; exit $?; }
exit 0
