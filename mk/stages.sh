#!/usr/bin/env bash
# Run make targets one after another, stop at the first that fails, and end
# with how long each took: `mk/stages.sh make lint rust-test py-test`.
set -u
make=$1
shift
names=()
times=()
status=0
for target in "$@"; do
    start=$(date +%s)
    $make --no-print-directory "$target"
    rc=$?
    names+=("$target")
    times+=($(($(date +%s) - start)))
    if [ "$rc" -ne 0 ]; then
        status=$rc
        names[-1]="$target (failed)"
        break
    fi
done
total=0
echo
echo "stage times:"
for i in "${!names[@]}"; do
    printf '  %-28s %5d s\n' "${names[$i]}" "${times[$i]}"
    total=$((total + times[i]))
done
printf '  %-28s %5d s\n' "total" "$total"
exit "$status"
