"""Tables for people and for pipes: a rich table on a terminal, plain aligned lines otherwise.

Piped or redirected output is never hard-wrapped: a check's evidence or a plugin's summary stays on
its own line, whole, for grep, diff and logs (rich would fold it to 80 columns).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

Cell = str | Text


def print_table(
    console: Console, title: str | Text, columns: Sequence[str], rows: Sequence[Sequence[Cell]], *, wrap: str = ""
) -> None:
    """Print `rows` under `columns`; `wrap` names the one column rich may fold on a terminal."""
    if console.is_terminal:
        table = Table(title=title, title_justify="left")
        for name in columns:
            table.add_column(name, overflow="fold", no_wrap=name != wrap)
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    texts = [[cell if isinstance(cell, Text) else Text.from_markup(cell) for cell in row] for row in rows]
    widths = [max([len(name), *(len(row[i].plain) for row in texts)]) for i, name in enumerate(columns[:-1])]

    def line(cells: Sequence[Text]) -> None:
        out = Text()
        for i, cell in enumerate(cells):
            if i < len(widths):
                out += cell + Text(" " * (widths[i] - len(cell.plain) + 2))
            else:
                out += cell
        console.print(out, soft_wrap=True, crop=False, overflow="ignore")

    console.print(title if isinstance(title, Text) else Text(title), soft_wrap=True)
    line([Text(name, style="bold") for name in columns])
    for row in texts:
        line(row)
