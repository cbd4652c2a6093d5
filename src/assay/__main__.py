"""``python -m assay`` runs the CLI (through the same entry point as the ``assay`` script)."""

from assay.cli.launch import main

main()
