"""The ``annols`` command line: parses arguments, calls the library, prints.

This is the only module that uses Click, prints, or exits. Every
:class:`~annols.errors.AnnolsError` is caught once, here, and shown as one line.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from annols import __version__, files, protocols
from annols.definition import Definition, design
from annols.errors import AnnolsError, ServerError
from annols.labelstudio import client as labelstudio
from annols.labelstudio import server as server_lib
from annols.protocols import config as configs_lib
from annols.study import demo as demo_lib
from annols.study import exports
from annols.study import findings as findings_lib
from annols.study import manifest as manifest_lib
from annols.study import pull as pull_lib
from annols.study import push as push_lib

if TYPE_CHECKING:
    from annols.study.hybrid import Judged

INTERRUPTED = "annols.interrupted"  # ctx.meta key (shared by nested contexts): what Ctrl-C left behind


class OneLineUsageError(click.UsageError):
    """A usage error shown as one line, ``Error: ...`` and where to read more, not Click's usage block."""

    def show(self, file: Any = None) -> None:
        message = self.format_message().strip()
        if self.ctx is not None:
            message += ("" if message.endswith((".", "?")) else ".") + f" See '{self.ctx.command_path} --help'."
        click.echo(f"Error: {message}", file=file, err=True)


def _one_line(e: click.UsageError) -> click.UsageError:
    if isinstance(e, OneLineUsageError | click.exceptions.NoArgsIsHelpError):  # the latter shows the help
        return e
    return OneLineUsageError(e.format_message(), e.ctx)


class SuggestingGroup(click.Group):
    """A group that answers a mistyped command with the close matches (difflib), else the commands it has."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and not name.startswith("-") and self.get_command(ctx, name) is None:
            names = self.list_commands(ctx)
            close = difflib.get_close_matches(name, names, n=3)
            hint = (f"did you mean {' or '.join(repr(c) for c in close)}?" if close
                    else f"the commands are {', '.join(names)}.")  # fmt: skip
            raise OneLineUsageError(f"no such command {name!r}; {hint}", ctx)
        return super().resolve_command(ctx, args)


class AnnolsGroup(SuggestingGroup):
    """Shows errors as one line on stderr, exit status 1 (usage errors: 2); never a traceback.

    ANNOLS_DEBUG=1 lets unexpected errors through with their traceback, for bug reports.
    """

    group_class = SuggestingGroup  # server, users: their mistyped commands get suggestions too

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:  # fmt: skip
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:  # annols' own options (annols --nope)
            raise _one_line(e) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AnnolsError as e:
            click.echo(f"Error: {e}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo(ctx.meta.get(INTERRUPTED, "Interrupted."), err=True)
            ctx.exit(130)
        except click.UsageError as e:  # a command's arguments: one line, not the usage block
            raise _one_line(e) from None
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except OSError as e:
            if os.environ.get("ANNOLS_DEBUG"):
                raise
            # A file annols was not written to through files.py (e.g. a temporary one): still one line.
            where = f" ({e.filename})" if e.filename else ""
            click.echo(f"Error: {e.strerror or type(e).__name__}{where}", err=True)
            ctx.exit(1)
        except Exception as e:
            if os.environ.get("ANNOLS_DEBUG"):
                raise
            # Only the type: an unknown error's text may hold anything (an SDK error dumps headers).
            click.echo(
                f"Error: unexpected {type(e).__name__}; re-run with ANNOLS_DEBUG=1 for details and please report it",
                err=True,
            )
            ctx.exit(1)


def _on_interrupt(message: str) -> None:
    """What Ctrl-C during the running command says: what it left behind and what to do."""
    click.get_current_context().meta[INTERRUPTED] = f"Interrupted: {message}"


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
    envvar="ANNOLS_DATA_DIR",
    help="Folder of the local server's data [env: ANNOLS_DATA_DIR; default: ~/.local/share/annols/label-studio].",
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


ISOLATE_FILE = click.option(
    "--isolate", "isolate", type=click.Path(dir_okay=False, path_type=Path),
    help="An isolated study's instances file (TOML, one [[instance]] per annotator: annotator and data_dir, or url "
    "and api_key_env; never a token): one Label Studio per annotator (docs/howto/isolated.md, docs/security.md).",
)  # fmt: skip
JOBS = click.option(
    "--jobs", type=click.IntRange(min=1), metavar="N",
    help="With --isolate: how many instances are visited at once (default: all, at most 4); 1 visits them one "
    "after another. Output comes in the instances file's order either way.",
)  # fmt: skip


def _jobs_need_isolate(jobs: int | None, isolate: Path | None) -> None:
    if jobs is not None and isolate is None:
        raise click.UsageError("--jobs is for --isolate (the instances visited at once)")


@server_group.command("start")
@click.option("--port", type=int, default=server_lib.DEFAULT_PORT, show_default=True, help="Loopback port.")
@DATA_DIR
@click.option("--annotator", "annotators", multiple=True, metavar="EMAIL",
              help="Start a server of this annotator's own instead (isolated mode; repeatable): on a free port, "
              "with its data in DATA_DIR/isolated/EMAIL; needs --isolate FILE, written with where each one is.")
@ISOLATE_FILE
@click.pass_context
def server_start(ctx: click.Context, port: int, data_dir: Path | None, annotators: tuple[str, ...],
                 isolate: Path | None) -> None:  # fmt: skip
    """Start the local Label Studio in the background and wait until it answers.

    The first start creates the data folder, the admin account and its API token
    (about a minute: database migrations). Later starts take seconds.

    With --annotator (isolated mode) it starts one server per annotator instead, each on
    its own free port with its own data, and writes their list to the --isolate file, for
    push, pull and status --isolate.

    \b
    Examples:
      annols server start --port 8080
      annols server start --annotator ann@example.org --annotator ben@example.org --isolate instances.toml
    """
    default = server_lib.default_data_dir()
    if annotators or isolate:
        _start_isolated(data_dir or default, annotators, isolate)
        return
    data_dir = data_dir or default
    click.echo(f"Starting Label Studio on 127.0.0.1:{port} (data in {data_dir}) ...", err=True)
    state, already = server_lib.start(data_dir, port=port)
    asked = ctx.get_parameter_source("port") not in (None, click.core.ParameterSource.DEFAULT)
    if already and asked and state.port != port:
        raise ServerError(
            f"Label Studio already runs at {state.url} (pid {state.pid}, data in {state.data_dir}), not on "
            f"port {port}: stop it first (annols server stop) to move it, or leave out --port"
        )
    if already:
        click.echo(f"Already running at {state.url} (pid {state.pid}).")
    else:
        click.echo(f"Label Studio is running at {state.url} (pid {state.pid}).")
    password_file = Path(state.data_dir) / server_lib.PASSWORD_FILE
    click.echo(f"Log in as {state.email}; the password is in {password_file}.")
    if Path(data_dir).expanduser().resolve() == default.expanduser().resolve():
        uses = "annols commands use this server by default."
    else:  # commands look in the default data dir unless told otherwise
        uses = (f"annols commands use this server with --data-dir {data_dir}, or after "
                f"`export ANNOLS_DATA_DIR={data_dir}`.")  # fmt: skip
    click.echo(
        f"{uses} Other tools: set LABEL_STUDIO_URL="
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


def _start_isolated(data_dir: Path, annotators: tuple[str, ...], isolate: Path | None) -> None:
    from annols.study import isolate as isolate_lib

    if not annotators or isolate is None:
        raise click.UsageError("isolated mode needs both --annotator EMAIL (one per annotator) and --isolate FILE")
    started = []
    for email in annotators:
        click.echo(f"Starting Label Studio for {email} (data in {data_dir / 'isolated'}) ...", err=True)
        (one,) = isolate_lib.start_local(data_dir / "isolated", [email])
        started.append(one[0])
        click.echo(f"{'Already running' if one[1] else 'Running'}: {email} at {one[0].url} (data in {one[0].data_dir})")
    isolate_lib.write_instances(isolate, started)
    click.echo(f"Wrote {isolate}: give it to push, pull and status with --isolate {isolate}.")


@server_group.command("stop")
@DATA_DIR
@click.option("--isolate", "isolate", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Stop the embedded servers of this instances file instead (isolated mode).")
def server_stop(data_dir: Path | None, isolate: Path | None) -> None:
    """Stop the local Label Studio started with `annols server start`.

    \b
    Examples:
      annols server stop
      annols server stop --isolate instances.toml
    """
    if isolate is not None:
        from annols.study import isolate as isolate_lib

        for instance in isolate_lib.read_instances(isolate):
            if instance.data_dir is not None:
                stopped = server_lib.stop(instance.data_dir)
                click.echo(f"{'Stopped' if stopped else 'Not running'}: {instance.annotator} ({instance.data_dir})")
        return
    data_dir = data_dir or server_lib.default_data_dir()
    if server_lib.stop(data_dir):
        click.echo("Stopped.")
    else:
        click.echo(f"Not running (data in {data_dir}).")


@main.command("demo")
@connection_options
def demo_command(url: str | None, api_key: str | None, data_dir: Path | None) -> None:
    """Push every protocol's example input into an example project of its own.

    Goes through the same path as `annols push` (summary-flaws with its example critic
    output as predictions); safe to run again.

    \b
    Example:
      annols server start && annols demo
    """
    client = _connect(url, api_key, data_dir)
    for p in demo_lib.push_demo_projects(client):
        click.echo(f"{client.url}/projects/{p.project_id}/data  {p.title}: {p.created} new, {p.present} already there")


# push and tasks read the same inputs: what a newcomer's own CSV needs, said once for both.
INPUTS_EPILOG = (
    "Inputs of your own definition (FILE.toml): JSONL or CSV with one column per task field, plus an optional "
    "'systems' naming the system behind each candidate, in order: a JSON list in JSONL, and in a CSV cell the "
    "names separated by | (bart|pegasus). An input without records is refused."
)
INPUTS = click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
VARIANT = click.option("--variant", help="Variant of the protocol (sentence-errors: abstract or headline).")
SEED = click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the per-task shuffle of the systems' positions."
)
WITH_ANNOTATIONS = click.option(
    "--with-annotations",
    is_flag=True,
    help="Also import judgments the input already holds, one Label Studio user per original annotator.",
)
PREDICTIONS = click.option(
    "--predictions",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Pre-annotations for annotators to correct (e.g. an LLM critic's output). Repeatable.",
)


def output_folder(help_text: str) -> Callable[[Any], Any]:
    """``-o/--output FOLDER`` (``out_dir``), required: the folder pull, convert and report write their files into."""
    return click.option(
        "-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path), help=help_text
    )


MANIFEST_DIR = click.option(
    "--manifest-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".annols"),
    show_default=True,
    help="Where the local manifest (task keys and the study's secret for them, task ids, systems shown, roles) is "
    "written: a secret of the study.",
)


SHARE_IDENTICAL = click.option(
    "--share-identical", is_flag=True,
    help="Records whose shown texts are identical (systems that produced the same output) share one task, shown "
    "once; its judgments are credited to every such system. Ratings, spans and sentences only; recorded at the "
    "first push, which every re-push must follow.",
)  # fmt: skip


@main.command("push", epilog=INPUTS_EPILOG)
@click.argument("protocol", type=PROTOCOL)
@INPUTS
@click.option("--project", "title", required=True, help="Project title (created if missing, reused if it matches).")
@VARIANT
@click.option("--overlap", type=int, help="Annotators per task (Label Studio's maximum_annotations); with --isolate: "
              "instances each task goes to (default: all).")  # fmt: skip
@click.option(
    "--change-overlap", is_flag=True,
    help="Let --overlap change the overlap of an existing project (refused without it: annotators may be at work).",
)  # fmt: skip
@click.option(
    "--batch-size", type=int, default=push_lib.DEFAULT_BATCH_SIZE, show_default=True, help="Tasks per request."
)
@SEED
@WITH_ANNOTATIONS
@PREDICTIONS
@MANIFEST_DIR
@click.option(
    "--gold",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Gold items: input in the protocol's format holding one judgment each (as --with-annotations reads it); "
    "mixed in unseen, their judgments never sent. Repeatable.",
)
@click.option(
    "--judge",
    "judge_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A judge's answers kept from the annotators (not sent to Label Studio); pull adds them. Repeatable.",
)
@click.option(
    "--human-share", type=float,
    help="A hybrid study: the --judge answers every item, humans this share of them (drawn from --seed, recorded "
    "in the manifest); only those go to Label Studio. The report gives judge-assisted (PPI++) estimates.",
)  # fmt: skip
@click.option(
    "--attention", type=click.IntRange(min=0), default=0, show_default=True,
    help="Attention checks the project should hold: copies of study items with two identical candidates "
    "(pairwise, ranking, ratings), mixed in. A push adds only those the project lacks, so a re-push or a later "
    "batch with the same N adds none once it holds N (none is ever removed).",
)  # fmt: skip
@ISOLATE_FILE
@click.option(
    "--password-file", type=click.File("r", encoding="utf-8"),
    help="With --isolate: the annotators' passwords for their accounts on their instances, one per line in the "
    "file's order, or one shared line; - reads stdin. Existing accounts are left as they are.",
)  # fmt: skip
@SHARE_IDENTICAL
@JOBS
@connection_options
def push_command(
    protocol: str,
    inputs: tuple[Path, ...],
    title: str,
    variant: str | None,
    overlap: int | None,
    change_overlap: bool,
    batch_size: int,
    seed: int,
    with_annotations: bool,
    predictions: tuple[Path, ...],
    manifest_dir: Path,
    gold: tuple[Path, ...],
    judge_files: tuple[Path, ...],
    human_share: float | None,
    attention: int,
    isolate: Path | None,
    password_file: Any,
    share_identical: bool,
    jobs: int | None,
    url: str | None,
    api_key: str | None,
    data_dir: Path | None,
) -> None:
    """Push a protocol's input files into a Label Studio project.

    Every input is checked before anything is sent. Safe to re-run: tasks already in the
    project (by their stable key) are not added again, also after an interrupted push.
    The keys on the server are made with a secret of the study kept in the manifest
    (--manifest-dir): a push into a project made before is refused without its manifest;
    push from where it was pushed, or after `annols manifest import`.
    A re-push whose --overlap differs from the project's is refused unless --change-overlap
    is given.

    \b
    Examples:
      annols push qa-feedback dev_feedback.json --project "QA feedback batch 1" --overlap 3
      annols push pairwise-aspects human_evaluation/ --project "JGR eval" --with-annotations
      annols push sentence-errors summaries.csv --variant abstract --project "CzeGPT abstracts"
      annols push qa-feedback batch.json --gold gold_feedback.json --project "QA feedback batch 2"
      annols push summary-flaws critiques.jsonl --project "Flaws 1" --judge critiques.jsonl

    --judge keeps a judge (JSONL, or summary-flaws' critic blocks) out of the annotators'
    sight: it is checked against the config and the inputs' tasks, never sent to the server,
    and kept in the manifest dir; `annols pull` with the same --manifest-dir adds it to the
    result files as annotator judge:<name>. Re-run a push with --judge to add a judge to an
    existing project.

    A file in the public arena layout (MT-Bench human judgments, Chatbot Arena: question_id,
    model_a, model_b, winner, judge, conversation_a, conversation_b, turn) goes in as it is
    with --with-annotations: one task per battle, the people's votes as its annotations, and
    judge values that name a model kept as hidden judges, as --judge keeps them.

    --human-share makes a hybrid study: the judge must answer every item; humans get a
    random share of them, the same on every re-run with the same --seed (best-worst and
    spans: whole items, an article's tuples or a source's candidates; a best-worst judge
    names a tuple's candidates in the order annols made it, not shuffled). The items only the
    judge answered stay in the manifest dir with the judge; `annols report` sets each system
    score and difference as a judge-assisted (PPI++) estimate beside the humans' own.

    --isolate FILE pushes the study to every annotator's own Label Studio (isolated mode:
    every task to each, and the annotator's account there, made with --password-file).
    With --overlap K each task goes to K of the instances instead, drawn from --seed and
    the study's secret, balanced (annotators' task counts differ by at most one, or by one
    item's tasks where an item holds several) and whole items to the same annotators; the
    draw is recorded in the manifest dir and kept by every re-push, which refuses another
    K or seed, or a changed set of annotators. --judge and --human-share work as above and
    send nothing of the judge to any instance (with --overlap K the K-draw runs over the
    humans' items); pull --isolate adds the judge to the merged folder:

    \b
      annols push pairwise-aspects items.jsonl --project "JGR eval" --isolate instances.toml --overlap 3
      annols push pairwise-aspects items.jsonl --project "JGR" --isolate instances.toml --judge j.jsonl --human-share .2
    """
    _on_interrupt("a push can be re-run: tasks already sent are not sent twice.")
    _jobs_need_isolate(jobs, isolate)
    d = _load(protocol, variant)
    if with_annotations:  # an arena file's model judges: hidden judges, as --judge keeps them
        judge_files = (*judge_files, *_arena_judges(d, inputs))
    if share_identical and (isolate is not None or judge_files or human_share is not None):
        raise AnnolsError("--share-identical works with a plain push only, not with --isolate, --judge or "
                          "--human-share: push without it")  # fmt: skip
    if isolate is not None or password_file is not None:
        _push_isolated(d, inputs, isolate, password_file, judge_files, human_share, url, api_key,
                       push_lib.PushOptions(title=title, overlap=overlap, batch_size=batch_size, seed=seed,
                                            predictions=predictions, manifest_dir=manifest_dir, gold=gold,
                                            attention=attention, change_overlap=change_overlap,
                                            with_annotations=with_annotations), jobs)  # fmt: skip
        return
    from annols.study import hybrid

    keys = push_lib.study_keys(manifest_dir, title)  # the inputs are read with the study's designs
    with design.drawn_with(keys.design_secret()):
        judged = hybrid.judged(d, judge_files, list(inputs), human_share, seed)  # before anything is sent
    draw = judged.draw if judged is not None else None
    _warn_without_ppi(draw)
    # also without --human-share: a re-push of a hybrid study would send humans the judge's only items
    hybrid.check_same_draw(manifest_lib.manifest_path(manifest_dir, title), draw.header if draw is not None else None)
    progress = _Progress("Importing")
    client = _connect(url, api_key, data_dir, on_notice=progress.notice)
    options = push_lib.PushOptions(
        title=title,
        overlap=overlap,
        batch_size=batch_size,
        seed=seed,
        with_annotations=with_annotations,
        predictions=predictions,
        manifest_dir=manifest_dir,
        gold=gold,
        attention=attention,
        change_overlap=change_overlap,
        only=draw.humans if draw is not None else None,
        hybrid=draw.header if draw is not None else None,
        secret=keys.secret,
        share_identical=share_identical,
    )

    def project_ready(p: labelstudio.Project, created: bool) -> None:
        click.echo(f"{'Created' if created else 'Reused'} project {p.title!r}: {client.url}/projects/{p.id}/data")

    try:
        report = push_lib.push(client, d, list(inputs), options, on_progress=progress.update, on_project=project_ready)
    finally:
        progress.close()
    extra = []
    if report.duplicates:
        extra.append(f"{report.duplicates} repeated input record(s) merged into their first task")
    if report.annotations:
        extra.append(f"{report.annotations} annotations")
    if report.predictions:
        extra.append(f"{report.predictions} predictions")
    if attention:
        extra.append(f"{report.attention} attention checks in the project")
    click.echo(
        f"created {report.created}, already present {report.present}, total {report.total}"
        + (f" ({'; '.join(extra)})" if extra else "")
    )
    if share_identical:
        outputs, shared = report.shared
        click.echo(f"{outputs} outputs share {shared} tasks (identical texts of several systems, shown once and "
                   "credited to each)")  # fmt: skip
    if judged is not None:
        from annols.study import hidden_judges

        store = hidden_judges.store_dir(manifest_dir, title)
        with design.drawn_with(keys.design_secret()):
            hybrid.keep(d, judged, list(inputs), store, report.project.id, report.project.title)
        _print_judged(judged, store, "the server")
    _print_warnings(report.warnings, "listed above")


def _arena_judges(d: Definition, inputs: Sequence[Path]) -> tuple[Path, ...]:
    """The model judges of the inputs in the arena layout, as judge files in a folder removed when the command
    ends (push keeps its own copies in the judge store)."""
    import shutil
    import tempfile

    from annols.study import arena

    held = Path(tempfile.mkdtemp(prefix="annols-arena-judges-"))
    click.get_current_context().call_on_close(lambda: shutil.rmtree(held, ignore_errors=True))
    return tuple(arena.hidden_judges(d, inputs, held))


def _print_judged(judged: Judged, store: Path, where: str) -> None:
    """What a push did with its hidden judges, kept in ``store`` and not on ``where``."""
    click.echo(f"judges {', '.join(judged.judges.names)} kept in {store} (not on {where})")
    draw = judged.draw
    if draw is not None:
        humans = draw.header["humans"]
        click.echo(f"hybrid study: humans get {humans} of {draw.items} items (share {draw.header['share']:g}, "
                   f"seed {draw.header['seed']}); the other {draw.items - humans} are the judge's only, kept in "
                   f"{store}")  # fmt: skip


def _push_isolated(d: Definition, inputs: tuple[Path, ...], isolate: Path | None, password_file: Any,
                   judge_files: tuple[Path, ...], human_share: float | None, url: str | None, api_key: str | None,
                   options: push_lib.PushOptions, jobs: int | None) -> None:  # fmt: skip
    from annols.labelstudio import users as users_lib
    from annols.study import hidden_judges, hybrid
    from annols.study import isolate as isolate_lib

    if isolate is None:
        raise click.UsageError("--password-file is for --isolate (for a shared server: annols users add)")
    if url or api_key:
        raise click.UsageError("--isolate takes each instance from its file: leave out --url and --api-key")
    instances = isolate_lib.read_instances(isolate)
    passwords = None
    if password_file is not None:
        passwords = users_lib.read_passwords(password_file, password_file.name, len(instances))
    # The judges are checked as a shared push checks them, before any instance is asked (on the study's designs).
    keys = isolate_lib.study_keys(instances, options.manifest_dir, options.title)
    options = dataclasses.replace(options, secret=keys.secret)
    with design.drawn_with(keys.design_secret()):
        judged = hybrid.judged(d, judge_files, list(inputs), human_share, options.seed)
    _warn_without_ppi(judged.draw if judged is not None else None)
    notice = lambda line: click.echo(line, err=True)  # noqa: E731
    pushed = isolate_lib.push(instances, d, list(inputs), options, passwords, on_notice=notice,
                              on_instance=lambda i, c: click.echo(f"{i.annotator}: {c.url}", err=True),
                              judged=judged, jobs=jobs)  # fmt: skip
    for p in pushed:
        r = p.report
        click.echo(f"{p.instance.annotator}: {p.url}/projects/{r.project.id}: created {r.created}, already present "
                   f"{r.present}, total {r.total}; account {p.account}")  # fmt: skip
    path = isolate_lib.study_file(options.manifest_dir, options.title)
    k = isolate_lib.recorded_overlap(options.manifest_dir, options.title)
    each = "" if k is None else f", each task on {k} of them (seed {options.seed})"
    click.echo(f"Isolated study on {len(pushed)} instances{each}; which holds whom: {path}")
    if judged is not None:
        _print_judged(judged, hidden_judges.store_dir(options.manifest_dir, options.title), "any instance")


class _Progress:
    """A progress bar of tasks on stderr that always ends its line: when it closes, and before a notice
    (a retry, a slow server) printed while it is drawn. Off a terminal it is one line, with the count."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None

    def update(self, done: int, total: int) -> None:
        if self.bar is None and total:
            self.bar = click.progressbar(length=total, label=f"{self.label} {total} task(s)", file=sys.stderr)
            self.bar.__enter__()
        if self.bar is not None:
            self.bar.update(done - self.bar.pos)

    def notice(self, line: str) -> None:
        if self.bar is not None and sys.stderr.isatty():
            click.echo("", err=True)  # the bar is drawn in place, without a newline: end its line first
        click.echo(line, err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def _warn_without_ppi(draw: object | None) -> None:
    """A hybrid push (a draw of the human share) warns, before anything is sent, when ppi-python is missing: the
    report's judge-assisted estimates need it."""
    from annols.analysis.judging import ppi

    if draw is not None and not ppi.available():
        click.echo(f"warning: a hybrid study's report estimates with PPI++, which needs ppi-python: it is not "
                   f"installed here; install it with: {ppi.INSTALL}", err=True)  # fmt: skip


def _print_warnings(warnings: Sequence[str], where: str) -> None:
    """One line per warning on the input (file and line, what was ignored) on stderr, then their count."""
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
    if warnings:
        click.echo(f"{len(warnings)} input warning(s), {where}: only harmless typos were ignored, no judgment guessed")


@main.command("tasks", epilog=INPUTS_EPILOG)
@click.argument("protocol", type=PROTOCOL)
@INPUTS
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The import file to write (JSON, for Label Studio's Import dialog).",
)
@VARIANT
@SEED
@WITH_ANNOTATIONS
@PREDICTIONS
@MANIFEST_DIR
@SHARE_IDENTICAL
def tasks_command(
    protocol: str,
    inputs: tuple[Path, ...],
    output: Path,
    variant: str | None,
    seed: int,
    with_annotations: bool,
    predictions: tuple[Path, ...],
    manifest_dir: Path,
    share_identical: bool,
) -> None:
    """Write the tasks a push would send as a Label Studio import file (JSON), offline.

    The tasks carry the same keys and blinding as `annols push`; the manifest is written
    too (DIR/<output name>.manifest.jsonl), and only it says which system is shown where.
    After importing the file into project P through the web UI, `annols manifest import
    DIR/<output name>.manifest.jsonl --project P` lets `annols pull` unblind.

    \b
    Example:
      annols tasks extractive-ranking sheet.xlsx -o tasks.json
    """
    d = _load(protocol, variant)
    count, duplicates, warnings, (outputs, shared) = push_lib.write_task_file(
        d, list(inputs), output, seed=seed, with_annotations=with_annotations, predictions=predictions,
        manifest_dir=manifest_dir, share=share_identical,
    )  # fmt: skip
    click.echo(f"Wrote {count} tasks to {output}" + (f" ({duplicates} duplicates skipped)" if duplicates else ""))
    if share_identical:
        click.echo(f"{outputs} outputs share {shared} tasks (identical texts of several systems, shown once and "
                   "credited to each)")  # fmt: skip
    _print_warnings(warnings, "listed above")


@main.command("pull")
@click.argument("protocol", type=PROTOCOL)
@click.option("--project", "title", required=True, help="Project title.")
@output_folder(
    "Folder for the export and result files (created; an earlier pull in it is updated, and left as it was if the "
    "pull fails)."
)
@VARIANT
@click.option(
    "--manifest-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".annols"),
    show_default=True,
    help="Where push kept the project's manifest (systems, order and role of each task; from another machine: "
         "annols manifest import) and hidden judges (push --judge), added as annotators judge:<name>.",
)  # fmt: skip
@click.option("--full", is_flag=True, help="Export every task, even into a folder holding an earlier pull.")
@click.option("--strict", is_flag=True, help="Fail on any finding (the server's tasks or annotations not as the "
              "push left them), writing nothing; without it findings are warnings, in findings.csv.")  # fmt: skip
@click.option("--blind-only", is_flag=True, help="Pull without the study's manifest (else refused): no system "
              "names in the results, every task a study item, nothing checked; its report compares no "
              "systems.")  # fmt: skip
@ISOLATE_FILE
@JOBS
@connection_options
def pull_command(
    protocol: str,
    title: str,
    out_dir: Path,
    variant: str | None,
    manifest_dir: Path,
    full: bool,
    strict: bool,
    blind_only: bool,
    isolate: Path | None,
    jobs: int | None,
    url: str | None,
    api_key: str | None,
    data_dir: Path | None,
) -> None:
    """Pull a project's annotations: export.json, the protocol's result files, results.csv.

    Also writes violations.csv (protocol rules the server does not check) and checks the
    counts against the server's.

    Systems, order and roles come from the manifest push wrote, never from the server; the
    server is checked against it: tasks added, deleted or whose meta or data changed, the
    label config or overlap changed, annotations saved by another user than the one they are
    credited to, credited to another account than an earlier pull saw, or gone since. Each
    finding is a warning line naming the task and annotation, and a row of findings.csv;
    --strict fails on any. Judgments on a task whose data (or project whose label config)
    changed are left out of the results, named and counted. Without the manifest pull
    refuses, unless --blind-only.

    Into a folder holding an earlier pull of the same project, only the tasks changed
    since (new, edited, skipped, deleted) are exported and merged; --full exports all.

    --isolate FILE pulls every annotator's instance into OUTPUT/instances/EMAIL and merges
    them into OUTPUT; an annotation on an instance credited to anyone but its annotator is
    a finding (not-the-annotator) and stays out of the merged files. The study's hidden
    judges (push --isolate --judge) are added to the merged files only, as a pull adds them.

    \b
    Example:
      annols pull qa-feedback --project "QA feedback batch 1" -o results/batch1
    """
    _on_interrupt(f"nothing was changed in {out_dir}; run the pull again.")
    _jobs_need_isolate(jobs, isolate)
    d = _load(protocol, variant)
    if isolate is not None:
        _pull_isolated(d, title, out_dir, manifest_dir, full, strict, isolate, url, api_key, jobs)
        return
    client = _connect(url, api_key, data_dir)
    from annols.study import hidden_judges

    store = hidden_judges.store_dir(manifest_dir, title)
    manifest = manifest_lib.manifest_path(manifest_dir, title)
    report = pull_lib.pull(client, d, title, out_dir, judges_dir=store, full=full, manifest=manifest,
                           strict=strict, blind_only=blind_only)  # moved in once counts match  # fmt: skip
    _print_findings(report.findings, out_dir)
    _print_pull_kind(report)
    _print_convert(report.convert, [report.export, out_dir / exports.ANNOTATORS_FILE, out_dir / exports.PROJECT_FILE])
    c = report.convert.counts
    click.echo(f"Counts match the server: {c.tasks} tasks, {c.annotations} annotations, {c.cancelled} skipped.")


@main.command("next-round", epilog=INPUTS_EPILOG)
@click.argument("protocol", type=PROTOCOL)
@INPUTS
@click.option("--project", "title", required=True, help="Project title (created by the first round).")
@click.option("--pull", "pull_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The latest pull of the project (annols pull -o DIR); not needed before the first round.")
@click.option("--effect", type=click.FloatRange(min=0, min_open=True), required=True,
              help="The smallest difference worth finding, on annols plan's scale of the style (pairwise: wins - "
                   "losses over decided judgments; best-worst: score points, -200 to 200; spans: the question's "
                   "own scale, or error points); a comparison whose interval lies within ±effect is decided "
                   "as a tie. Fixed at the first round.")  # fmt: skip
@click.option("--overlap", type=click.IntRange(min=1), required=True, help="Annotators per task.")
@click.option("--batch", type=click.IntRange(min=1), default=20, show_default=True,
              help="Study items a round pushes at most (best-worst and spans: an item is every task sharing a "
                   "context, pushed together).")  # fmt: skip
@click.option("--budget", type=click.IntRange(min=1),
              help="Study items in the project at most, over all rounds (judgments: items x --overlap; re-opened "
                   "items of --passes add judgments, not items).")  # fmt: skip
@click.option("--budget-judgments", type=click.IntRange(min=1),
              help="Human judgments asked of the project at most, over all rounds: a task counts its overlap (or "
                   "its judgments if more); a round pushes or re-opens only what fits.")  # fmt: skip
@click.option("--passes", type=click.IntRange(min=1),
              help="Passes over the items (default 1): when the pool holds no more item for the undecided "
                   "comparisons, pass p re-opens items already pushed so that --overlap more annotators judge each "
                   "(p x --overlap in all); each pass has its own confidence sequence at --alpha / passes. Fixed at "
                   "the first round.")  # fmt: skip
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="The chance that any decision is wrong, however often the study is looked at.")  # fmt: skip
@click.option("--goal", type=click.Choice(["all", "best"]),
              help="What the study exists for: all (default) decides every pair; best only the pairs that decide "
                   "which system is best, per question. Fixed at the first round; later rounds keep it.")  # fmt: skip
@click.option("--pairs", type=click.Choice(["uniform", "adaptive"]),
              help="Pairwise studies of 3 systems or more: how a round spreads its items over the undecided pairs. "
                   "uniform (default): the pool's seeded order; adaptive: the pairs whose Bradley-Terry order is "
                   "least certain, most items where the strengths' intervals narrow most, a quarter of the items to "
                   "the least-sampled pairs (docs/statistics.md). Fixed at the first round.")  # fmt: skip
@click.option("--error-cap", type=click.FloatRange(min=0, min_open=True),
              help="Spans with [[spans.weights]] (MQM): where each candidate's error score is clipped, at least the "
                   "largest weight declared (the default; 25 for MQM). A study of long outputs needs a higher one. "
                   "Fixed at the first round.")  # fmt: skip
@VARIANT
@SEED
@MANIFEST_DIR
@connection_options
def next_round_command(
    protocol: str,
    inputs: tuple[Path, ...],
    title: str,
    pull_dir: Path | None,
    effect: float,
    overlap: int,
    batch: int,
    budget: int | None,
    budget_judgments: int | None,
    passes: int | None,
    alpha: float,
    goal: str | None,
    pairs: str | None,
    error_cap: float | None,
    variant: str | None,
    seed: int,
    manifest_dir: Path,
    url: str | None,
    api_key: str | None,
    data_dir: Path | None,
) -> None:
    """Run a study in rounds: decide what the latest pull shows, push the next batch.

    The comparisons are every pair of systems in the INPUTS (the pool), per question. Each
    gets an anytime-valid confidence sequence over items (docs/statistics.md): looking after
    every round and stopping when it is clear keeps the chance of any wrong decision at
    --alpha. An item counts once every one of its tasks has its --overlap judgments (the
    first in annotation order); items judged but not complete wait, left out until they are.
    The next batch is items of the pool not pushed yet that hold an undecided pair.
    With --goal best only the pairs between systems not yet decided worse than another
    count, and the study ends with the best system (or those tied for best).
    Styles: pairwise, ratings, ranking, best-worst, and spans definitions with a numeric
    question per candidate (ESA) or [[spans.weights]] (MQM: the error score, clipped at the
    largest weight, or at --error-cap). When every comparison is decided, the pool has no item left for them, or
    --budget is reached, nothing is pushed. --seed also sets the order the pool's items are drawn in.
    With --passes P, once the pool has no item left for them, rounds re-open items already
    pushed that hold an undecided pair (--overlap more annotators each, P x --overlap at most),
    each pass its own confidence sequence (docs/statistics.md); --budget-judgments caps the
    judgments asked.
    Each round is recorded beside the manifest (PROJECT.rounds.jsonl); give it to
    `annols report --rounds`.

    \b
    Example:
      annols next-round pairwise-aspects pool/ --project "JGR seq" --effect 0.3 --overlap 3 --batch 40
      annols pull pairwise-aspects --project "JGR seq" -o results/seq
      annols next-round pairwise-aspects pool/ --project "JGR seq" --effect 0.3 --overlap 3 --batch 40 \\
          --pull results/seq --budget 400
      annols next-round pairwise-aspects pool/ --project "JGR small" --effect 0.3 --overlap 1 --batch 40 \\
          --passes 3 --budget-judgments 300
    """
    from annols.study import rounds as rounds_lib

    _on_interrupt("run next-round again: items already pushed are not pushed twice.")
    d = _load(protocol, variant)
    if error_cap is not None:  # refused before any server is asked
        from annols.analysis.planning.sequential import check_error_cap

        check_error_cap(d, error_cap)
    tidy = None
    if pull_dir is not None:  # a round after the first: the pull's systems and roles are the manifest's
        from annols.study.table import read_judgments

        manifest_lib.require(manifest_lib.manifest_path(manifest_dir, title), title)
        tidy = read_judgments(d, [pull_dir], rounds=True)[0]
    client = _connect(url, api_key, data_dir)
    options = rounds_lib.RoundOptions(title=title, effect=effect, batch=batch, budget=budget, alpha=alpha, seed=seed,
                                      overlap=overlap, manifest_dir=manifest_dir, goal=goal, passes=passes,
                                      budget_judgments=budget_judgments, error_cap=error_cap,
                                      pairs=pairs)  # fmt: skip
    result = rounds_lib.next_round(client, d, list(inputs), tidy, options)
    for c in result.comparisons:
        seen = f", mean {c.mean:+.3f}, interval [{c.low:+.3f}, {c.high:+.3f}]" if c.items else ""
        at = f" (pass {c.pass_})" if result.passes > 1 else ""
        click.echo(f"{c.question}: {c.first} vs {c.second}: {c.items} items{seen}: {c.decision}{at}")
    for question, said in (result.conclusions or {}).items():
        click.echo(f"{question}: {said}")
    if result.waiting:
        click.echo(f"{result.waiting} item(s) waiting for judgments: judged but not complete, left out until they "
                   "are")  # fmt: skip
    if result.reopened:
        target = max(result.reopened.values())
        click.echo(f"round {result.round}: re-opened {len(result.reopened)} task(s) for {target} annotators each "
                   f"(pass {result.stage}), {result.items} study items in the project")  # fmt: skip
    elif result.pushed:
        created = result.push.created if result.push else 0
        tasks = f" of {len(result.pushed)} task(s)" if len(result.pushed) != result.pushed_items else ""
        click.echo(f"round {result.round}: pushed {result.pushed_items} item(s){tasks} ({created} new), "
                   f"{result.items} study items in the project")  # fmt: skip
    else:
        click.echo(f"round {result.round}: nothing pushed: {rounds_lib.REASONS[result.reason]} "
                   f"({result.items} study items, {result.judgments} judgments)")  # fmt: skip
    click.echo(f"recorded in {result.record}")


def _pull_isolated(d: Definition, title: str, out_dir: Path, manifest_dir: Path, full: bool, strict: bool,
                   isolate: Path, url: str | None, api_key: str | None, jobs: int | None) -> None:  # fmt: skip
    from annols.study import isolate as isolate_lib

    if url or api_key:
        raise click.UsageError("--isolate takes each instance from its file: leave out --url and --api-key")
    instances = isolate_lib.read_instances(isolate)
    merged = isolate_lib.pull(instances, d, title, out_dir, manifest_dir, full=full, strict=strict,
                              on_notice=lambda line: click.echo(line, err=True), jobs=jobs)  # fmt: skip
    _print_findings(merged.findings, out_dir)
    for p in merged.instances:
        c = p.report.convert.counts
        click.echo(f"{p.instance.annotator}: counts match the server: {c.tasks} tasks, {c.annotations} annotations, "
                   f"{c.cancelled} skipped")  # fmt: skip
    _print_convert(merged.convert, [out_dir / exports.EXPORT_FILE, out_dir / exports.ANNOTATORS_FILE,
                                    out_dir / exports.PROJECT_FILE])  # fmt: skip
    c = merged.convert.counts
    click.echo(f"Merged {len(merged.instances)} instances: {c.tasks} tasks, {c.annotations} annotations, "
               f"{c.cancelled} skipped.")  # fmt: skip


@main.command("convert")
@click.argument("protocol", type=PROTOCOL)
@click.argument("export", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_folder("Folder for the result files (created; files of the same name are replaced).")
@VARIANT
def convert_command(protocol: str, export: Path, out_dir: Path, variant: str | None) -> None:
    """Convert a saved raw JSON export into the protocol's result files, offline.

    Gives the same files as `annols pull`. Annotators are named by email from the
    annotators.json that pull wrote beside the export, else by user id (the export alone
    does not hold their emails). Hidden judges the pull wrote to judges/ beside the
    export are added as annotators judge:<name>, as pull does.

    \b
    Example:
      annols convert pairwise-aspects results/export.json -o results/again
    """
    from annols.study import hidden_judges
    from annols.study import judges as judges_lib

    d = _load(protocol, variant)
    judge_files = hidden_judges.pulled(export.parent)
    found_pool = hidden_judges.pool(export.parent / hidden_judges.PULL_DIR)
    judges = judges_lib.Judges.read(d, judge_files, hybrid=found_pool is not None) if judge_files else None
    _print_convert(pull_lib.convert(export, d, out_dir, judges=judges))
    if judges is not None:
        from annols.study import hybrid

        if found_pool is not None:  # a hybrid study's judge-only items: no task of the export holds them
            hybrid.mark_pool(judges, hybrid.read_pool(found_pool))
        judges.check_used()


@main.command("validate")
@click.argument("protocol", type=PROTOCOL)
@click.argument("export", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--project", "title", help="Check a live project instead of a saved export.")
@VARIANT
@connection_options
def validate_command(
    protocol: str,
    export: Path | None,
    title: str | None,
    variant: str | None,
    url: str | None,
    api_key: str | None,
    data_dir: Path | None,
) -> None:
    """Check annotations against the protocol's rules, which the server never checks.

    Lists task, annotator, rule and what was found; exits 1 on any violation.

    \b
    Examples:
      annols validate sentence-errors results/export.json
      annols validate extractive-ranking --project "Ranking study"
    """
    d = _load(protocol, variant)
    if (export is None) == (title is None):
        raise click.UsageError("give either EXPORT or --project")
    if title is not None:
        import tempfile

        client = _connect(url, api_key, data_dir)
        with tempfile.TemporaryDirectory(prefix="annols-validate-") as tmp:
            report = pull_lib.pull(client, d, title, Path(tmp))
            violations = list(pull_lib.validate(report.export, d))
            tasks = report.convert.counts.annotations
    else:
        assert export is not None
        violations = list(pull_lib.validate(export, d))
        tasks = sum(len(t.annotations) for t in exports.read_export(export, shares=False))
    for v in violations:
        click.echo(f"{v.task_key}\t{v.annotator}\t{v.rule}\t{v.found}")
    if violations:
        click.echo(f"Error: {len(violations)} rule violation(s) in {tasks} annotations", err=True)
        sys.exit(1)
    click.echo(f"No rule violations in {tasks} annotations.")


def _print_findings(findings: Sequence[findings_lib.Finding], out_dir: Path) -> None:
    """A pull's findings (what the server holds that the manifest contradicts), on stderr: one line each, then where."""
    for finding in findings:
        click.echo(f"warning: {finding.line()}", err=True)
    if findings:
        where = out_dir / findings_lib.FINDINGS_FILE
        click.echo(f"{len(findings)} finding(s) (docs/security.md), in {where}", err=True)


def _print_convert(report: pull_lib.ConvertReport, written: Sequence[Path] = ()) -> None:
    c = report.counts
    click.echo(f"{c.tasks} tasks, {c.annotations} annotations ({c.cancelled} skipped)")
    for path in [*written, *report.files]:
        click.echo(f"wrote {path}")
    _print_warnings(report.input_warnings, "from push (blinding.jsonl, or the task meta of earlier pushes), "
                    "listed above")  # fmt: skip
    if report.violations:
        click.echo(f"{report.violations} rule violation(s): see {report.files[-1]}")


@main.group("manifest")
def manifest_group() -> None:
    """Hand a project's manifest to a team-mate who pulls or pushes from another machine.

    The manifest (written by push into --manifest-dir) holds what blinding depends on: the
    systems shown in each task, their order, and which tasks are gold items and attention
    checks, and the study's secret that the task keys on the server are made with. The
    server holds none of it, so a pull needs the manifest to unblind, and a push into the
    project needs it to find the tasks already there.

    A study in rounds (annols next-round) goes with its record (PROJECT.rounds.jsonl beside
    the manifest): the export carries it and the import puts it back, so that the team-mate's
    next round continues the study instead of starting it again.

    The exported file is a secret of the study: whoever reads it can unblind every task.
    Never give it to annotators; send it the way you would send a password.

    \b
    Examples:
      annols manifest export --project "Study 1" -o study1.manifest.jsonl
      annols manifest import study1.manifest.jsonl
    """


@manifest_group.command("export")
@click.option("--project", "title", required=True, help="Project title, as pushed.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The file to write (readable by you only): a secret of the study.")  # fmt: skip
@click.option("--manifest-dir", type=click.Path(file_okay=False, path_type=Path), default=Path(".annols"),
              show_default=True, help="Where push wrote the manifest.")  # fmt: skip
def manifest_export(title: str, output: Path, manifest_dir: Path) -> None:
    """Write the project's manifest to a file, for a team-mate's `annols manifest import`.

    With it goes the record of a study in rounds (PROJECT.rounds.jsonl), if there is one.
    The file is a secret of the study: whoever reads it can unblind every task.
    """
    done = manifest_lib.export_manifest(manifest_dir, title, output)
    rounds = f", and the record of its {done.rounds} round(s)" if done.rounds else ""
    click.echo(f"Wrote the manifest of {title!r} ({done.tasks} tasks{rounds}) to {output}: a secret of the study, "
               "keep it from annotators")  # fmt: skip


@manifest_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--manifest-dir", type=click.Path(file_okay=False, path_type=Path), default=Path(".annols"),
              show_default=True, help="Where pull (and push) look for it.")  # fmt: skip
@click.option("--replace", is_flag=True, help="Replace a different manifest (and record of rounds) of the same "
              "project.")  # fmt: skip
@click.option("--project", "title", help="The project it is of, for the manifest `annols tasks` wrote (its header "
              "names none): the project you imported the tasks file into.")  # fmt: skip
def manifest_import(file: Path, manifest_dir: Path, replace: bool, title: str | None) -> None:
    """Put a manifest from `annols manifest export` (or `annols tasks`) where pull looks for it.

    The record of a study in rounds the file carries goes beside it, for next-round and
    report --rounds; a file without one leaves a record already there as it is.
    The file is a secret of the study: keep it from annotators, and delete the copy you were sent.
    """
    done = manifest_lib.import_manifest(file, manifest_dir, replace, title)
    click.echo(f"Imported the manifest of {done.title!r} ({done.tasks} tasks) to {done.path}")
    if done.record is not None:
        click.echo(f"Imported the record of its {done.rounds} round(s) to {done.record}")


@main.group("users")
def users_group() -> None:
    """Accounts on the Label Studio server: add annotators, list everyone.

    \b
    Examples:
      annols users add ann@example.org ben@example.org cas@example.org --password-file passwords.txt
      annols users list
    """


@users_group.command("add")
@click.argument("emails", nargs=-1, required=True, metavar="EMAIL...")
@click.option(
    "--password-file",
    type=click.File("r", encoding="utf-8"),
    help="Passwords, one per line in the order of the emails, or one shared line; - reads stdin.",
)
@connection_options
def users_add(
    emails: tuple[str, ...], password_file: Any, url: str | None, api_key: str | None, data_dir: Path | None
) -> None:
    """Add an account for each EMAIL that has none; existing accounts are left as they are.

    With --password-file the accounts are made through the organization's invite link,
    so each person can log in with that password at once (Label Studio's users API
    ignores passwords). Without it they cannot log in: use that only for people whose
    judgments you import. Passwords are never printed.

    \b
    Examples:
      annols users add ann@example.org ben@example.org --password-file passwords.txt
      annols users add importer@example.org
    """
    from annols.labelstudio import users as users_lib

    addresses = users_lib.check_emails(emails)
    passwords = None
    if password_file is not None:
        passwords = users_lib.read_passwords(password_file, password_file.name, len(addresses))
    client = _connect(url, api_key, data_dir)
    for added in users_lib.add_accounts(client, addresses, passwords):
        if not added.created:
            click.echo(f"exists  {added.email} (id {added.id}; left unchanged)")
        elif added.can_log_in:
            click.echo(f"created {added.email} (id {added.id}; can log in with the password given)")
        else:
            click.echo(f"created {added.email} (id {added.id}; no password: cannot log in)")


@users_group.command("list")
@connection_options
def users_list(url: str | None, api_key: str | None, data_dir: Path | None) -> None:
    """Print every account: email, id and name, tab-separated, one per line.

    \b
    Example:
      annols users list
    """
    from annols.labelstudio import users as users_lib

    client = _connect(url, api_key, data_dir)
    for account in users_lib.list_accounts(client):
        click.echo(f"{account.email}\t{account.id}\t{account.name}")


@main.command("report")
@click.argument("protocol", type=PROTOCOL)
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@output_folder("Folder for report.md, report.html, tables/ and plots/ (created; files in it are replaced).")
@VARIANT
@click.option(
    "--overlap", type=click.IntRange(min=1), help="Annotators asked per item, for sources without project.json."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option(
    "--bootstrap", type=click.IntRange(min=0), default=1000, show_default=True, help="Bootstrap resamples (0: none)."
)
@click.option(
    "--gold",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="The gold input pushed with --gold: scores each annotator on the gold items. Repeatable.",
)
@click.option(
    "--rating-tolerance", type=click.FloatRange(min=0), default=0.0, show_default=True,
    help="A rating this close to the gold rating counts as a match; a judge's rating this close to a human's "
         "is no disagreement.",
)  # fmt: skip
@click.option(
    "--min-gold-accuracy", type=click.FloatRange(0, 1), help="Flag annotators whose gold accuracy is below this."
)
@click.option(
    "--exclude-annotators", default="",
    help="Comma-separated annotators left out of every table, or 'flagged' (those under --min-gold-accuracy).",
)  # fmt: skip
@click.option(
    "--judge",
    "judge_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A judge's answers (JSONL, see annols.study.judges) to compare with the annotators; repeatable.",
)
@click.option(
    "--judge-pool", "judge_pool", multiple=True, type=click.Path(exists=True, path_type=Path),
    help="Input (the protocol's format) of items a --judge answered beyond the humans': adds judge-assisted "
    "(PPI++) estimates. Repeatable.",
)  # fmt: skip
@click.option(
    "--epsilon",
    type=click.FloatRange(0, 1),
    default=0.2,
    show_default=True,
    help="The alternative annotator test's margin; its authors advise 0.2 for experts, 0.15 for skilled "
         "annotators, 0.1 for crowd-workers.",
)
@click.option(
    "--adjudicated", multiple=True, type=click.Path(exists=True, path_type=Path),
    help="A pull of the adjudication project (annols adjudicate): agreement before and after, and the "
         "style's tables again from the adjudicated judgments (adjudicated_*). Repeatable.",
)  # fmt: skip
@click.option("--models", is_flag=True, help="Add annotator models, Dawid-Skene and MACE (needs annols[models]).")
@click.option("--rounds", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The record of a study run in rounds (PROJECT.rounds.jsonl beside the manifest, annols "
                   "next-round): adds the sequential study's section.")  # fmt: skip
def report_command(
    protocol: str,
    sources: tuple[Path, ...],
    out_dir: Path,
    variant: str | None,
    overlap: int | None,
    seed: int,
    bootstrap: int,
    gold: tuple[Path, ...],
    rating_tolerance: float,
    min_gold_accuracy: float | None,
    exclude_annotators: str,
    adjudicated: tuple[Path, ...],
    models: bool = False,
    judge_files: tuple[Path, ...] = (),
    epsilon: float = 0.2,
    rounds: Path | None = None,
    judge_pool: tuple[Path, ...] = (),
) -> None:
    """Agreement and result tables of a study: report.md, report.html, plots and CSV tables.

    Each SOURCE is a pull output folder or an export.json; several sources of the same
    protocol (batches of one study) are one study, a task in two of them one item.

    \b
    Examples:
      annols report pairwise-aspects results/batch1 -o report
      annols report extractive-ranking batch1/ batch2/export.json -o report --overlap 3
      annols report qa-feedback results/ --gold gold.json --min-gold-accuracy 0.6 --exclude-annotators flagged -o rep
      annols report pairwise-aspects results/batch1 --judge gpt.jsonl --judge llama.jsonl -o report
      annols report examples/summeval-ratings.toml results/summeval -o report --models

    --judge adds the "Judges and humans" section: each judge file (one JSON line per task:
    task or id, judge, answers in the protocol's codes) is set beside the annotators,
    offline; a pull folder's judges/ (hidden judges, push --judge) is read as well.

    A judge that answered items no human did (a hybrid study, push --human-share, or
    --judge-pool with those items' input) adds "Judge-assisted estimates (PPI++)": each
    system score and difference with the judge, beside the humans' own on the same items,
    and what the judge was worth in human items. It needs ppi-python (pip install
    'annols[ppi]').

    --models adds Dawid-Skene and MACE; they need crowd-kit (pip install 'annols[models]').
    """
    from annols import report as report_lib
    from annols.study import table as table_lib

    _on_interrupt(f"the report in {out_dir} was not finished; run the report again.")
    d = _load(protocol, variant)
    if models:
        from annols.analysis.raters import models as models_lib

        if not models_lib.available():  # the report says so too, but only inside report.md
            click.echo(f"warning: --models: crowd-kit is not installed, so the annotator models section is left "
                       f"out; install it with: {models_lib.INSTALL}", err=True)  # fmt: skip
    excluded = tuple(name.strip() for name in exclude_annotators.split(",") if name.strip())
    if "flagged" in excluded and min_gold_accuracy is None:
        raise click.UsageError("--exclude-annotators flagged needs --min-gold-accuracy (and --gold)")
    options = report_lib.ReportOptions(
        seed=seed, bootstrap=bootstrap, overlap=overlap, gold=gold, rating_tolerance=rating_tolerance,
        min_gold_accuracy=min_gold_accuracy, exclude_annotators=excluded, adjudicated=adjudicated, models=models,
        rounds=rounds,
    )  # fmt: skip
    table = table_lib.read(d, list(sources), options, judges=judge_files, judge_pool=judge_pool)
    result = report_lib.build_report(d, table, out_dir, options, epsilon=epsilon)
    from annols.analysis.judging import ppi

    if any(ppi.INSTALL in line for finding in result.sections for line in finding.summary):
        click.echo(f"warning: the judge-assisted estimates (PPI++) are left out: ppi-python is not installed; "
                   f"install it with: {ppi.INSTALL}", err=True)  # fmt: skip
    click.echo(f"{result.items} items, {result.annotations} judgments from {len(sources)} source(s)")
    click.echo(f"wrote {out_dir / 'report.html'}, {out_dir / 'report.md'} and {len(result.files) - 2} tables and plots")


def _numbers(kind: type) -> Callable[[click.Context, click.Parameter, str | None], tuple[Any, ...] | None]:
    def parse(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[Any, ...] | None:
        if value is None:
            return None
        try:
            out = tuple(kind(v) for v in value.split(","))
        except ValueError:
            raise click.BadParameter(f"comma-separated numbers, e.g. 50,100,200; not {value!r}") from None
        if not out or min(out) < 1:
            raise click.BadParameter("numbers of 1 or more")
        return out

    return parse


@main.command("plan")
@click.argument("protocol", type=PROTOCOL)
@VARIANT
@click.option("--pilot", "pilots", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="A pull of a pilot study (repeatable): effect, tie rate and variances from it.")  # fmt: skip
@click.option("--effect", type=float, help="Difference to detect (pairwise: wins - losses over decided, 0.2; "
              "ratings: points, 0.3; ranking: mean rank, 0.3).")  # fmt: skip
@click.option("--tie-rate", type=float, help="Pairwise: share of judgments that are ties (0.2).")
@click.option("--item-sd", type=float, help="Item standard deviation (pairwise: logit scale).")
@click.option("--annotator-sd", type=float, help="Annotator sd (pairwise: logit scale).")
@click.option("--residual-sd", type=float, help="Ratings: residual standard deviation of a rating difference.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Target power.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Level before the report's correction.")
@click.option("--items", callback=_numbers(int), help="Items of the grid, comma-separated [25,...,800].")
@click.option("--annotators", callback=_numbers(int), help="Annotators per item of the grid [1,2,3,5].")
@click.option("--cost-per-judgment", type=click.FloatRange(min=0), help="Cost of one judgment (one annotation).")
@click.option("--simulations", type=click.IntRange(min=10), default=500, show_default=True, help="Per design.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation.")
@click.option("--judge-correlation", type=click.FloatRange(-1, 1),
              help="A hybrid study: the judge's correlation with the humans' per-item value; adds the human "
              "judgments needed with the judge (PPI++).")  # fmt: skip
@click.option("--human-share", type=click.FloatRange(0, 1, min_open=True), default=0.2, show_default=True,
              help="With --judge-correlation: the share of the judge's items humans judge.")  # fmt: skip
def plan_command(protocol: str, variant: str | None, pilots: tuple[Path, ...], effect: float | None,
                 tie_rate: float | None, item_sd: float | None, annotator_sd: float | None,
                 residual_sd: float | None, power: float, alpha: float, items: tuple[int, ...] | None,
                 annotators: tuple[int, ...] | None, cost_per_judgment: float | None, simulations: int,
                 seed: int, judge_correlation: float | None = None, human_share: float = 0.2) -> None:  # fmt: skip
    """Power of study designs (items x annotators per item) before the study, by seeded simulation.

    Simulates the style's main comparison with the report's test (over items) and
    correction; prints per design the power (rejections towards the better system; with
    --annotator-sd above 0, of a test with annotators random too) and the false-positive
    rate of the report's test at effect 0, and the cheapest safe design reaching --power,
    with its judgments and cost. With --pilot, the effect (the pilot's smallest difference), tie rate and
    variance components come from a pilot's pull; options given still override.

    \b
    Examples:
      annols plan pairwise-aspects --effect 0.2 --tie-rate 0.3 --cost-per-judgment 0.5
      annols plan my-ratings.toml --pilot pilot/ --items 50,100,200 --annotators 1,3
      annols plan summeval --judge-correlation 0.4 --human-share 0.2

    --judge-correlation r adds, per number of annotators, the human items and judgments
    needed with a judge on every item and humans on --human-share of them: PPI++ (as the
    report's judge-assisted estimates) has about 1 - r^2 (1 - share) of the humans' variance,
    so n human items with the judge are worth n / (1 - r^2 (1 - share)) alone. A --pilot
    that holds a judge's answers (pushed with --judge) gives r when the option is not given.
    """
    from annols.analysis.planning import plan as plan_lib

    d = _load(protocol, variant)
    given = {"effect": effect, "tie_rate": tie_rate, "item_sd": item_sd, "annotator_sd": annotator_sd,
             "residual_sd": residual_sd}  # fmt: skip
    a = plan_lib.assumptions(d, alpha=alpha, power=power)
    if pilots:
        from annols.study.table import read_judgments

        a = plan_lib.from_pilot(d, *read_judgments(d, list(pilots)), a)
    a = plan_lib.override(a, **given)
    result = plan_lib.plan(a, items or plan_lib.ITEMS, annotators or plan_lib.annotators_for(a), simulations, seed,
                           cost_per_judgment)  # fmt: skip
    for line in plan_lib.describe(a):
        click.echo(line)
    click.echo(f"{simulations} simulations per design, seed {seed}.")
    click.echo(plan_lib.HEADER)
    for row in plan_lib.as_rows(result):
        click.echo("\t".join(str(v) for v in row))
    for line in plan_lib.summary(result) + plan_lib.claims(result):
        click.echo(line)
    if judge_correlation is None and pilots:  # a pilot with a judge (a hybrid pilot, or push --judge) gives r
        from annols.analysis.judging import ppi
        from annols.formats.answers import is_judge
        from annols.study.table import read_judged

        frame, names = read_judged(d, list(pilots))
        found = ppi.pilot_correlation(frame, names[0], is_judge) if names else None
        if found is not None:
            judge_correlation = found
            click.echo(f"The pilot's judge {names[0]}: r = {found:.2f} with the humans (the median over the "
                       "differences of two systems, per item).")  # fmt: skip
    if judge_correlation is not None:
        from annols.analysis.judging import ppi

        factor = ppi.share_factor(judge_correlation, human_share)
        click.echo(f"With a judge of correlation {judge_correlation:g} on every item and humans on a share "
                   f"{human_share:g}: PPI++ variance x {factor:.3f} (1 - r^2 (1 - share)), intervals "
                   f"{100 * (1 - factor ** 0.5):.1f} % narrower; to reach power {a.power}:")  # fmt: skip
        table = ppi.judge_plan(result.designs, a.power, judge_correlation, human_share)
        click.echo("\t".join(table.columns))
        for row in table.itertuples(index=False):
            click.echo("\t".join("-" if v is None or v != v else str(v) for v in row))


@main.command("adjudicate")
@click.argument("protocol", type=PROTOCOL)
@click.option("--project", "title", required=True, help="The study's project title.")
@click.option("--into", required=True, help="The adjudication project (created, or reused with the same config).")
@click.option(
    "--rating-tolerance", type=click.FloatRange(min=0), default=0.0, show_default=True,
    help="Ratings this close agree.",
)  # fmt: skip
@click.option(
    "--span-f1", type=click.FloatRange(0, 1), default=1.0, show_default=True,
    help="Spans agree when the F1 of their exact (label, start, end) matches reaches this.",
)  # fmt: skip
@VARIANT
@click.option("--manifest-dir", type=click.Path(file_okay=False, path_type=Path), default=Path(".annols"),
              show_default=True, help="Where push kept the study's manifest; the adjudication project's manifest "
              "is written there too.")  # fmt: skip
@connection_options
def adjudicate_command(
    protocol: str,
    title: str,
    into: str,
    rating_tolerance: float,
    span_f1: float,
    variant: str | None,
    manifest_dir: Path,
    url: str | None,
    api_key: str | None,
    data_dir: Path | None,
) -> None:
    """Put the items annotators disagree on into an adjudication project, each annotator's answer a prediction.

    Choices, codes and ranks disagree when they differ, ratings beyond --rating-tolerance,
    spans when their F1 is under --span-f1. Each task shows one prediction per annotator
    (named by annotator) to pick and edit. Pull the adjudication project like any other:
    its result files hold annotator "adjudicated".

    \b
    Example:
      annols adjudicate pairwise-aspects --project "JGR eval" --into "JGR eval adjudication"
    """
    from annols.study import adjudicate as adjudicate_lib

    d = _load(protocol, variant)
    client = _connect(url, api_key, data_dir)
    rules = adjudicate_lib.Rules(tolerance=rating_tolerance, span_f1=span_f1)
    report = adjudicate_lib.adjudicate(client, d, title, into, rules, manifest_dir)
    click.echo(f"{report.disagreements} of {report.items} items with two or more annotators disagree")
    click.echo(f"{'created' if report.created else 'updated'} {client.url}/projects/{report.project.id}/: "
               f"added {report.added}, already present {report.present}")  # fmt: skip


def _connect(
    url: str | None, api_key: str | None, data_dir: Path | None, on_notice: Callable[[str], None] | None = None
) -> labelstudio.LabelStudioClient:
    """The server's client; its retry notices go to stderr, one line each (or to ``on_notice``)."""
    return labelstudio.connect(url, api_key, data_dir, on_notice=on_notice or (lambda line: click.echo(line, err=True)))


def _load(protocol: str, variant: str | None) -> Definition:
    return protocols.load(protocol, variant)


@main.command("status")
@click.argument("protocol", type=PROTOCOL)
@click.option("--project", "title", required=True, help="Project title.")
@click.option("--pull", "pull_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A pull folder of the project: adds its report's agreement tables.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON (for scripts).")
@VARIANT
@ISOLATE_FILE
@click.option("--manifest-dir", type=click.Path(file_okay=False, path_type=Path), default=Path(".annols"),
              show_default=True, help="Where push wrote the study's manifest (status refuses without it: from "
              "another machine, annols manifest import); with --isolate, the study's record and its instances' "
              "manifests.")  # fmt: skip
@JOBS
@connection_options
def status_command(
    protocol: str,
    title: str,
    pull_dir: Path | None,
    as_json: bool,
    variant: str | None,
    isolate: Path | None,
    manifest_dir: Path,
    jobs: int | None,
    url: str | None,
    api_key: str | None,
    data_dir: Path | None,
) -> None:
    """How far a study is, without a full export.

    Tasks, annotations and skips per annotator, tasks complete and short of the overlap,
    annotations per hour over the last 24 hours and when the overlap is reached at that
    pace; with --pull, the agreement tables of that pull's report. With --isolate, the sum
    over the annotators' instances: a task counts once per instance, or, for a study pushed
    with --isolate --overlap K, once, complete when its K annotators have judged it (the
    study's record and the instances' manifests are read from --manifest-dir).

    \b
    Example:
      annols status qa-feedback --project "QA feedback batch 1" --pull results/batch1
    """
    from annols.study import status as status_lib

    _jobs_need_isolate(jobs, isolate)
    d = _load(protocol, variant)
    if isolate is not None:
        from annols.study import isolate as isolate_lib

        if url or api_key:
            raise click.UsageError("--isolate takes each instance from its file: leave out --url and --api-key")
        found = isolate_lib.status(isolate_lib.read_instances(isolate), d, title, manifest_dir=manifest_dir,
                                   jobs=jobs)  # fmt: skip
    else:
        found = status_lib.status(_connect(url, api_key, data_dir), d, title)
        # Said once the project is found: its counts hold gold items and attention checks only the manifest names.
        manifest_lib.require(manifest_lib.manifest_path(manifest_dir, title), title)
    if pull_dir is not None:
        from annols.report import agreement_tables
        from annols.study.table import read

        found.agreement = agreement_tables(d, read(d, [pull_dir]))
    click.echo(found.to_json() if as_json else status_lib.render(found), nl=not as_json)


def _print_pull_kind(report: pull_lib.PullReport) -> None:
    """Whether the pull was incremental, and if it exported in full though it could not be, why."""
    if report.full_reason:
        click.echo(f"Exported in full: the folder held an earlier pull, but {report.full_reason}.", err=True)
    changes = report.changes
    if changes is not None:
        click.echo(
            f"Incremental: {changes.changed} changed task(s) exported again ({changes.new} new), "
            f"{changes.deleted} deleted, the rest kept from the earlier export."
        )


@main.command("arena")
@click.argument("protocol", type=PROTOCOL)
@click.argument("battles", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_folder("New (or empty) folder for the pull folder the report reads.")
@click.option("--judge", "judges", multiple=True, metavar="NAME",
              help="A judge value that names a model judge (repeatable); model names are found without it too.")
@click.option("--human", "humans", multiple=True, metavar="NAME",
              help="A judge value that names a person, though it looks like a model's name (repeatable).")
@VARIANT
def arena_import_command(protocol: str, battles: Path, out_dir: Path, judges: tuple[str, ...],
                         humans: tuple[str, ...], variant: str | None) -> None:  # fmt: skip
    """Read battles in the public arena layout (MT-Bench human judgments, Chatbot Arena) as a pull, offline.

    One vote per row: question_id, model_a, model_b, winner (model_a, model_b, tie, tie
    (bothbad)), judge, conversation_a, conversation_b, turn; JSON lines, a JSON array or
    parquet. People's votes become the pull's annotations; judge values that name a model
    become judge files in judges/, so the report sets them beside the people.

    \b
    Example:
      annols arena examples/arena.toml mt_bench_human.jsonl -o results/arena
      annols report examples/arena.toml results/arena -o report/arena
    """
    from annols.study import arena

    d = _load(protocol, variant)
    done = arena.import_arena(d, battles, out_dir, judges, humans)
    _print_warnings(done.warnings, str(battles))
    click.echo(f"{done.items} battle(s) of {len(done.systems)} systems: {done.votes} vote(s) by "
               f"{len(done.people)} people, {done.judge_votes} by model judges "
               f"({', '.join(done.judges) or 'none'}) -> {done.out_dir}")


@main.command("export")
@click.argument("protocol", type=PROTOCOL)
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@output_folder("New (or empty) folder for the dataset: preference.jsonl, unpaired.jsonl, README.md.")
@click.option("--rule", type=click.Choice(["majority", "unanimous", "adjudicated"]), default="majority",
              show_default=True, help="Which verdict of a task is exported (written in the dataset card).")
@click.option("--ties", type=click.Choice(["drop", "keep"]), default="drop", show_default=True,
              help="Drop tied verdicts, or keep them as preference rows with tie = true (never unpaired).")
@click.option("--min-votes", type=click.IntRange(min=1), default=1, show_default=True,
              help="With --rule unanimous: the fewest judgments a task needs.")
@click.option("--adjudicated", "adjudicated", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="The pull of the adjudication project (annols adjudicate), for --rule adjudicated.")
@click.option("--exclude-annotator", "exclude", multiple=True, metavar="EMAIL",
              help="An annotator whose judgments are never exported (repeatable).")
@VARIANT
def export_preferences_command(protocol: str, sources: tuple[Path, ...], out_dir: Path, rule: str, ties: str,
                               min_votes: int, adjudicated: tuple[Path, ...], exclude: tuple[str, ...],
                               variant: str | None) -> None:  # fmt: skip
    """Write a pairwise, ranking or best-worst study's judgments as preference training data (TRL, datasets), offline.

    SOURCES are pull folders (or export.json files). preference.jsonl has TRL's prompt,
    chosen, rejected (conversational where a field is a conversation), unpaired.jsonl
    TRL's prompt, completion, label (KTO); README.md is the dataset card: the rule, the
    systems, the annotators and their agreement. Gold items, attention checks, judges and
    excluded annotators are never exported. Rankings and best-worst tuples give the pairs
    they imply (a ranking of n: its n(n-1)/2 pairs, equal ranks a tie; a tuple: best over
    each other, each other over worst), the rule applied to each pair of an item, and the
    card says so.

    \b
    Example:
      annols export examples/arena.toml results/arena -o data/arena-dpo
      annols export examples/arena.toml results/arena -o data/arena-unanimous --rule unanimous --min-votes 2
    """
    from annols.study import preferences

    d = _load(protocol, variant)
    chosen = preferences.Rule(verdict=rule, ties=ties, min_votes=min_votes, exclude=exclude)
    done = preferences.export_preferences(d, sources, out_dir, chosen, adjudicated)
    left = ", ".join(f"{n} of {why}s" for why, n in sorted(done.left_out.items()))
    click.echo(f"{done.rows} preference row(s) ({done.ties} ties), {done.unpaired} unpaired, from {done.tasks} "
               f"item(s) by {len(done.annotators)} annotator(s); {done.no_verdict} pair(s) without a verdict "
               f"({chosen.describe()})" + (f"; never exported: {left}" if left else "") + f" -> {done.out_dir}")


if __name__ == "__main__":  # pragma: no cover
    main()
