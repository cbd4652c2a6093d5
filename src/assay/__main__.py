"""``python -m assay`` runs the CLI."""

from assay.cli.app import main

main()
