#!/bin/bash
# Partial credit: one component per file, and their mean as the reward (reward.json, read first by harbor).
mkdir -p /logs/verifier
score() { [ -f "$1" ] && [ "$(wc -l < "$1")" -eq "$2" ] && echo 1 || echo 0; }
a=$(score /app/data/a.txt 3); b=$(score /app/data/b.txt 5); c=$(score /app/data/c.txt 7)
reward=$(awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { printf "%.4f", (a + b + c) / 3 }')
printf '{"reward": %s, "a": %s, "b": %s, "c": %s}\n' "$reward" "$a" "$b" "$c" > /logs/verifier/reward.json
