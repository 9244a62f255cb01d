"""``python -m tillbook.cli``: the same as the ``tillbook`` console script."""

from tillbook.cli import main

main()
