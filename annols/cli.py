"""The ``annols`` command line: parses arguments, calls the library, prints.

This is the only module that uses Click, prints, or exits. Every
:class:`~annols.errors.AnnolsError` is caught once, here, and shown as one line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from annols import __version__, files, labelstudio, protocols
from annols import config as configs_lib
from annols import demo as demo_lib
from annols import server as server_lib
from annols.definition import Definition
from annols.errors import AnnolsError


class AnnolsGroup(click.Group):
    """Shows library errors as one line on stderr, exit status 1; never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AnnolsError as e:
            click.echo(f"Error: {e}", err=True)
            ctx.exit(1)


class ProtocolType(click.ParamType):
    """A shipped protocol name (from the registry) or the path of a definition file."""

    name = "protocol"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(protocols.names()) + "|FILE.toml]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        return str(value)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(n) for n in protocols.names() if n.startswith(incomplete)]


PROTOCOL = ProtocolType()


@click.group(cls=AnnolsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="annols")
def main() -> None:
    """Run published human-evaluation protocols on a self-hosted Label Studio.

    \b
    Start with:
      annols protocols                 the protocols annols knows
      annols config qa-feedback        its Label Studio labeling config
    """


@main.command("protocols")
def protocols_command() -> None:
    """List the shipped protocols: name, style, seed file, what it asks.

    \b
    Example:
      annols protocols
    """
    rows = []
    for name in protocols.names():
        variants = protocols.variants(name)
        d = protocols.load(name, variants[0] if variants else None)
        label = f"{name} [{'|'.join(variants)}]" if variants else name
        rows.append((label, d.style, d.seed, d.summary))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + "  " + row[3])


@main.command("config")
@click.argument("protocol", type=PROTOCOL)
@click.option("--variant", help="Variant of the protocol, e.g. abstract or headline for sentence-errors.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE instead of stdout."
)
@click.option("--instructions", is_flag=True, help="Print the guideline as instructions HTML instead.")
def config_command(protocol: str, variant: str | None, output: Path | None, instructions: bool) -> None:
    """Print the Label Studio labeling config of PROTOCOL.

    PROTOCOL is a shipped name or the path of your own definition file.

    \b
    Examples:
      annols config summary-flaws
      annols config sentence-errors --variant headline -o headline.xml
      annols config ./my-protocol.toml
    """
    d = _load(protocol, variant)
    text = configs_lib.instructions(d) + "\n" if instructions else configs_lib.label_config(d)
    if output:
        files.write_text(output, text)
        click.echo(f"Wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


@main.command("configs")
@click.option("--check", is_flag=True, help="Only compare; exit 1 naming every stale or missing file.")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("configs"),
    show_default=True,
    help="Folder of the config files.",
)
def configs_command(check: bool, directory: Path) -> None:
    """Write configs/<name>[-<variant>].xml for every shipped protocol.

    \b
    Examples:
      annols configs
      annols configs --check      (CI: fails if a committed config is out of date)
    """
    results = configs_lib.sync_configs(directory, check=check)
    bad = [r for r in results if r.status in ("stale", "missing")]
    for r in results:
        if r.status != "unchanged" or not check:
            click.echo(f"{r.status:9} {r.path}")
    if bad:
        click.echo(
            f"Error: {len(bad)} config file(s) out of date: "
            + ", ".join(str(r.path) for r in bad)
            + "; run `annols configs` to regenerate them",
            err=True,
        )
        sys.exit(1)
    if check:
        click.echo(f"{len(results)} config files up to date in {directory}")


DATA_DIR = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of the local server's data [default: ~/.local/share/annols/label-studio].",
)


def connection_options(f: Any) -> Any:
    """--url / --api-key, falling back to LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY, then the local server."""
    f = click.option(
        "--api-key",
        envvar="LABEL_STUDIO_API_KEY",
        help="API key: a legacy token or a personal access token [env: LABEL_STUDIO_API_KEY].",
    )(f)
    f = click.option(
        "--url", envvar="LABEL_STUDIO_URL", help="Label Studio URL [env: LABEL_STUDIO_URL; default: the local server]."
    )(f)
    return DATA_DIR(f)


@main.group("server")
def server_group() -> None:
    """Run a local Label Studio (pip-installed, SQLite) on 127.0.0.1.

    \b
    Examples:
      annols server start
      annols server status
      annols server stop
    """


@server_group.command("start")
@click.option("--port", type=int, default=server_lib.DEFAULT_PORT, show_default=True, help="Loopback port.")
@DATA_DIR
def server_start(port: int, data_dir: Path | None) -> None:
    """Start the local Label Studio in the background and wait until it answers.

    The first start creates the data folder, the admin account and its API token
    (about a minute: database migrations). Later starts take seconds.

    \b
    Example:
      annols server start --port 8080
    """
    data_dir = data_dir or server_lib.default_data_dir()
    click.echo(f"Starting Label Studio on 127.0.0.1:{port} (data in {data_dir}) ...", err=True)
    state, already = server_lib.start(data_dir, port=port)
    if already:
        click.echo(f"Already running at {state.url} (pid {state.pid}).")
    else:
        click.echo(f"Label Studio is running at {state.url} (pid {state.pid}).")
    password_file = Path(state.data_dir) / server_lib.PASSWORD_FILE
    click.echo(f"Log in as {state.email}; the password is in {password_file}.")
    click.echo(
        "annols commands use this server by default. Other tools: set LABEL_STUDIO_URL="
        f"{state.url} and LABEL_STUDIO_API_KEY to the token under Account & Settings."
    )


@server_group.command("status")
@DATA_DIR
def server_status(data_dir: Path | None) -> None:
    """Say whether the local Label Studio is running (exit 1 if not).

    \b
    Example:
      annols server status
    """
    data_dir = data_dir or server_lib.default_data_dir()
    state = server_lib.status(data_dir)
    if state is None:
        click.echo(f"Not running (data in {data_dir}).")
        sys.exit(1)
    click.echo(f"Running at {state.url} (pid {state.pid}, data in {state.data_dir}).")


@server_group.command("stop")
@DATA_DIR
def server_stop(data_dir: Path | None) -> None:
    """Stop the local Label Studio started with `annols server start`.

    \b
    Example:
      annols server stop
    """
    data_dir = data_dir or server_lib.default_data_dir()
    if server_lib.stop(data_dir):
        click.echo("Stopped.")
    else:
        click.echo(f"Not running (data in {data_dir}).")


@main.command("demo")
@connection_options
def demo_command(url: str | None, api_key: str | None, data_dir: Path | None) -> None:
    """Create one example project per protocol, with its example tasks.

    Projects that already exist are left as they are, so it is safe to run twice.

    \b
    Example:
      annols server start && annols demo
    """
    client = labelstudio.connect(url, api_key, data_dir)
    for p in demo_lib.create_demo_projects(client):
        verb = "created" if p.created else "exists "
        click.echo(f"{verb} {client.url}/projects/{p.project_id}/data  {p.title} ({p.tasks} tasks)")


def _load(protocol: str, variant: str | None) -> Definition:
    return protocols.load(protocol, variant)


if __name__ == "__main__":  # pragma: no cover
    main()
