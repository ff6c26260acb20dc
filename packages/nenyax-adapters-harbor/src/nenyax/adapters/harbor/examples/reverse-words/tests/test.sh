#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/output.txt 2>/dev/null)" = "four three two one" ]; then
  echo '{"reward": 1.0, "exact": 1}' > /logs/verifier/reward.json
else
  echo '{"reward": 0.0, "exact": 0}' > /logs/verifier/reward.json
fi
