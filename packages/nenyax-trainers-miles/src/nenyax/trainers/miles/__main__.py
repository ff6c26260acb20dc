"""``python -m nenyax.trainers.miles URI --out rows.jsonl``: an environment's tasks as miles' prompt data."""

from nenyax.trainers.miles.rows import main

raise SystemExit(main())
