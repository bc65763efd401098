#!/usr/bin/env bash
# Run the tests that touch syntax (the tree, the libcst fallback, every rule's fixtures and
# examples), and those of what a hostile repository reaches without torch (links, patterns,
# output, the language server's limits), on each supported Python other than the one the main suite ran on, each in
# its own virtual environment (.venv-3.X, reused).  torch has a local wheel for one
# Python only, so these environments have no runtime extra: no test here needs torch.
#
#     bash scripts/test_all_pythons.sh [3.10 3.12 3.13]
set -euo pipefail
cd "$(dirname "$0")/.."

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.10 3.11 3.12 3.13)
main=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
tests=(tests/test_cst.py tests/test_parser_fallback.py tests/test_fixtures.py tests/test_rule_metadata.py
       tests/test_inference.py tests/test_suppression.py tests/test_bad_input.py tests/test_linear_time.py
       tests/test_legacy_syntax.py tests/test_target_version.py
       tests/test_hardening_links.py tests/test_hardening_patterns.py tests/test_hardening_output.py
       tests/test_hardening_dos.py)

interpreter() {
    local version=$1 root
    root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
    for candidate in "$root"/versions/"$version".*/bin/python"$version"; do
        [ -x "$candidate" ] && { echo "$candidate"; return; }
    done
    command -v "python$version" || true
}

for version in "${versions[@]}"; do
    if [ "$version" = "$main" ]; then
        continue  # the main suite ran there
    fi
    python=$(interpreter "$version")
    if [ -z "$python" ]; then
        echo "test_all_pythons: Python $version is not installed (pyenv install $version)" >&2
        exit 2
    fi
    venv=".venv-$version"
    if [ ! -x "$venv/bin/python" ]; then
        "$python" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --upgrade pip
    fi
    "$venv/bin/python" -m pip install --quiet -e '.[test]'
    echo "== Python $version: ${tests[*]}"
    "$venv/bin/python" -m pytest -q -n auto --maxprocesses 4 -p no:cacheprovider "${tests[@]}"
done
