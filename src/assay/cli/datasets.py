"""``assay datasets create|list|show|import|export|add|versions|delete``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from assay.cli.common import CliError, console, count, open_cli_store, print_json, when

datasets_app = typer.Typer(help="Versioned datasets in the store.", no_args_is_help=False)


def _short(value: Any, width: int = 60) -> Text:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return Text(text if len(text) <= width else text[: width - 1] + "…")


@datasets_app.command("create")
def datasets_create(
    name: Annotated[str, typer.Argument(help="Dataset name (unique).")],
    description: Annotated[
        str | None, typer.Option("--description", "-d", help="What the dataset holds.")
    ] = None,
) -> None:
    """Create an empty dataset (version 0)."""
    with open_cli_store() as store:
        try:
            info = store.datasets.create(name, description=description)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
    console.print(f"created dataset {info.name} ({info.id})", highlight=False)


@datasets_app.command("list")
def datasets_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Every dataset with its current version and item count."""
    with open_cli_store() as store:
        infos = store.datasets.list()
    if as_json:
        print_json([i.model_dump(mode="json") for i in infos])
        return
    table = Table(title=count(len(infos), "dataset"), title_justify="left")
    for column in ("name", "version", "items", "updated", "description"):
        table.add_column(column)
    for info in infos:
        table.add_row(
            Text(info.name),
            str(info.version),
            f"{info.item_count:,}",
            when(info.updated_at),
            Text(info.description or ""),
        )
    console.print(table)


@datasets_app.command("show")
def datasets_show(
    name: Annotated[str, typer.Argument(help="Dataset name or id.")],
    version: Annotated[int | None, typer.Option("--version", help="Version to show.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="Items to show.")] = 20,
    offset: Annotated[int, typer.Option("--offset", help="Items to skip first.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """A page of a dataset's items (at its current version unless --version)."""
    with open_cli_store() as store:
        info = _get(store, name)
        shown = info.version if version is None else version
        total = store.datasets.count_items(info.id, shown)
        if as_json:
            page = store.datasets.items(info.id, shown, offset=offset, limit=limit)
            print_json(
                {
                    "dataset": info.model_dump(mode="json"),
                    "version": shown,
                    "total": total,
                    "items": [item.model_dump(mode="json") for item in page],
                }
            )
            return
        table = Table(
            title=f"{info.name} v{shown}: {count(total, 'item')}, showing {offset + 1}–"
            f"{min(total, offset + limit)}",
            title_justify="left",
        )
        for column in ("id", "input", "expected_output", "output", "metadata"):
            table.add_column(column, overflow="fold")
        for item in store.datasets.items(info.id, shown, offset=offset, limit=limit):
            table.add_row(
                Text(item.id),
                _short(item.input),
                _short(item.expected_output),
                _short(item.output),
                _short(item.metadata, 40),
            )
    console.print(table)


@datasets_app.command("versions")
def datasets_versions(
    name: Annotated[str, typer.Argument(help="Dataset name or id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Every version of a dataset and what changed in it."""
    with open_cli_store() as store:
        info = _get(store, name)
        versions = store.datasets.versions(info.id)
    if as_json:
        print_json([v.model_dump(mode="json") for v in versions])
        return
    table = Table(title=f"{info.name}: {count(len(versions), 'version')}", title_justify="left")
    for column in ("version", "created", "added", "updated", "deleted", "items", "note"):
        table.add_column(column)
    for v in versions:
        table.add_row(
            str(v.version),
            when(v.created_at),
            str(v.added),
            str(v.updated),
            str(v.deleted),
            str(v.item_count),
            Text(v.note or ""),
        )
    console.print(table)


@datasets_app.command("import")
def datasets_import(
    file: Annotated[Path, typer.Argument(help="JSONL, CSV, Parquet file or HF dataset folder.")],
    name: Annotated[str, typer.Option("--name", help="Dataset to import into.")],
    mapping: Annotated[
        list[str] | None,
        typer.Option("--map", help="item_field=source_column (repeatable)."),
    ] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="jsonl|csv|parquet|hf")] = None,
    split: Annotated[str | None, typer.Option("--split", help="HF DatasetDict split.")] = None,
    create: Annotated[
        bool, typer.Option("--create/--no-create", help="Create the dataset if it does not exist.")
    ] = True,
    note: Annotated[
        str | None, typer.Option("--note", help="A note stored with the new version.")
    ] = None,
    encoding: Annotated[
        str | None,
        typer.Option("--encoding", help="Text encoding of a JSONL/CSV file (default utf-8)."),
    ] = None,
    upsert: Annotated[
        bool,
        typer.Option(
            "--upsert",
            help="Ids already in the dataset: a changed item becomes a new version of it, "
            "an unchanged one is left alone.",
        ),
    ] = False,
    skip_existing: Annotated[
        bool,
        typer.Option(
            "--skip-existing",
            help="Ids already in the dataset are left alone; only new ids are added.",
        ),
    ] = False,
) -> None:
    """Import every row as one new version; a bad row aborts the import, nothing is stored."""
    from assay.operations.datasets import import_dataset
    from assay.operations.inputs import InputError, check_pairs
    from assay.store import ItemExistsError

    if upsert and skip_existing:
        raise CliError("--upsert and --skip-existing exclude each other; choose one")
    try:
        pairs = check_pairs(mapping or [], "--map")
    except InputError as exc:
        raise CliError(str(exc)) from exc
    with open_cli_store() as store:
        try:
            done = import_dataset(
                store,
                file,
                dataset=name,
                fmt=fmt,
                mapping=pairs,
                create=create,
                split=split,
                note=note,
                encoding=encoding,
                upsert=upsert,
                skip_existing=skip_existing,
            )
        except ItemExistsError as exc:
            raise CliError(
                f"{exc}; use --upsert to update changed items or --skip-existing to add only "
                "the new ids"
            ) from exc
        except (ValueError, LookupError, OSError) as exc:
            raise CliError(str(exc)) from exc
    info = done.dataset
    message = f"imported {count(done.read, 'item')} into {info.name} v{info.version}"
    if upsert or skip_existing:
        message += (
            f": {done.added:,} added, {done.updated:,} updated, {done.unchanged:,} left as "
            f"they were{'' if done.new_version else ' (no new version)'}"
        )
    console.print(message, highlight=False)


@datasets_app.command("export")
def datasets_export(
    name: Annotated[str, typer.Argument(help="Dataset name or id.")],
    file: Annotated[Path, typer.Argument(help="Output file (format from the extension).")],
    version: Annotated[
        int | None, typer.Option("--version", help="Version to export (default: current).")
    ] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="jsonl|csv|parquet|hf")] = None,
) -> None:
    """Write a dataset version's items to a file."""
    from assay.operations.datasets import export_file

    with open_cli_store() as store:
        try:
            exported = export_file(store, name, file, version=version, fmt=fmt)
        except (ValueError, LookupError, OSError) as exc:
            raise CliError(str(exc)) from exc
    console.print(f"exported {count(exported, 'item')} to {file}", highlight=False)


@datasets_app.command("add")
def datasets_add(
    name: Annotated[str, typer.Argument(help="Dataset name or id.")],
    input: Annotated[str | None, typer.Option("--input", help="Input text or JSON.")] = None,
    expected_output: Annotated[
        str | None, typer.Option("--expected-output", help="The expected answer.")
    ] = None,
    output: Annotated[str | None, typer.Option("--output", help="A stored output.")] = None,
    item_id: Annotated[
        str | None, typer.Option("--id", help="Item id (default: a new one).")
    ] = None,
    metadata: Annotated[str | None, typer.Option("--metadata", help="JSON object.")] = None,
) -> None:
    """Add one item (a new version)."""
    from assay.operations.datasets import add_item
    from assay.operations.inputs import json_or_text

    with open_cli_store() as store:
        info = _get(store, name)
        try:
            item, new_version = add_item(
                store,
                info.id,
                input=json_or_text(input),
                expected_output=json_or_text(expected_output),
                output=json_or_text(output),
                metadata=json_or_text(metadata) or {},
                item_id=item_id,
            )
        except ValueError as exc:
            raise CliError(str(exc)) from exc
    console.print(f"added {item.id} to {info.name} (v{new_version})", highlight=False)


@datasets_app.command("rename")
def datasets_rename(
    name: Annotated[str, typer.Argument(help="Dataset name or id.")],
    new_name: Annotated[str, typer.Argument(help="Its new name (unique).")],
) -> None:
    """Rename a dataset; the runs on it follow the new name."""
    with open_cli_store() as store:
        info = _get(store, name)
        try:
            renamed = store.datasets.rename(info.id, new_name)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
    console.print(f"renamed {info.name} to {renamed.name}", highlight=False)


@datasets_app.command("delete")
def datasets_delete(
    name: Annotated[str, typer.Argument(help="Dataset name or id.")],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
) -> None:
    """Delete a dataset and its history (runs keep their results)."""
    with open_cli_store() as store:
        info = _get(store, name)
        if not yes and not typer.confirm(f"delete dataset {info.name} and all its versions?"):
            raise typer.Exit(1)
        store.datasets.delete(info.id)
    console.print(f"deleted {info.name}", highlight=False)


def _get(store: Any, name: str) -> Any:
    try:
        return store.datasets.get(name)
    except LookupError as exc:
        raise CliError(str(exc).strip("'\"")) from exc
