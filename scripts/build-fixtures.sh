#!/usr/bin/env bash
# Rebuilds the committed guest modules: every test/fixtures/**/*.c and examples/**/*.c into a .wasm of
# the same name beside it (clang + wasi-libc), and every test/fixtures/as/*.ts with AssemblyScript.
# A source in a package directory (one holding subako-package.json) builds that package's module.wasm.
# Extra clang flags for one file go on a `// build-flags: ...` line in its leading comment (first 10
# lines); clang runs in the source's directory, so relative paths in the flags are relative to it.
# Arguments, if any, limit the build to sources under those paths: `scripts/build-fixtures.sh test/fixtures/as`.
# Idempotent: it always writes the same outputs from the same sources. Tests never run it; they load
# the committed .wasm files. Needs: clang, wasi-libc (see shared/reference/toolchains.md), npm deps.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

built=0
roots=("$@")

# True when no paths were given, or the source lies under one of them.
selected() {
  local source="$1"
  [[ ${#roots[@]} -eq 0 ]] && return 0
  local root
  for root in "${roots[@]}"; do
    root="${root%/}"
    [[ "$source" == "$root" || "$source" == "$root"/* ]] && return 0
  done
  return 1
}

build_c() {
  local source="$1"
  local dir name output
  dir="$(dirname "$source")"
  name="$(basename "$source" .c)"
  output="$name.wasm"
  [[ -f "$dir/subako-package.json" ]] && output="module.wasm"
  local flags=()
  local line
  line="$(head -n 10 "$source" | grep -m 1 -E '^//[[:space:]]*build-flags:' || true)"
  if [[ -n "$line" ]]; then
    # Word-split the flags on purpose: they are a space-separated list.
    read -r -a flags <<< "${line#*build-flags:}"
  fi
  (cd "$dir" && clang --target=wasm32-wasi -O2 -s ${flags[@]+"${flags[@]}"} -o "$output" "$name.c")
  echo "built $dir/$output"
  built=$((built + 1))
}

build_as() {
  local source="$1"
  local output="${source%.ts}.wasm"
  npx --no-install asc "$source" --config node_modules/@assemblyscript/wasi-shim/asconfig.json -O3 --outFile "$output"
  echo "built $output"
  built=$((built + 1))
}

if ! command -v clang > /dev/null; then
  echo "clang is not installed: apt-get install -y --no-install-recommends clang lld wasi-libc libclang-rt-14-dev-wasm32" >&2
  exit 1
fi

while IFS= read -r -d '' source; do
  selected "$source" && build_c "$source"
done < <(find test/fixtures examples -name '*.c' -type f -print0 2>/dev/null | sort -z)

if [[ -d test/fixtures/as ]]; then
  while IFS= read -r -d '' source; do
    selected "$source" && build_as "$source"
  done < <(find test/fixtures/as -maxdepth 1 -name '*.ts' -type f -print0 | sort -z)
fi

echo "$built modules built"
