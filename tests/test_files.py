import os
import stat

import pytest

from annols import files


def test_a_new_file_gets_the_permissions_open_would_give(tmp_path) -> None:
    mask = os.umask(0o027)
    try:
        files._UMASK, saved = 0o027, files._UMASK
        files.write_text(tmp_path / "results.csv", "a\n")
        (tmp_path / "plain.csv").write_text("a\n")
    finally:
        files._UMASK = saved
        os.umask(mask)
    written = stat.S_IMODE((tmp_path / "results.csv").stat().st_mode)
    assert written == 0o640
    assert written == stat.S_IMODE((tmp_path / "plain.csv").stat().st_mode)


def test_a_replaced_file_keeps_its_permissions(tmp_path) -> None:
    target = tmp_path / "export.json"
    target.write_text("old")
    target.chmod(0o600)
    files.write_text(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_nothing_is_replaced_when_the_block_fails(tmp_path) -> None:
    target = tmp_path / "results.csv"
    target.write_text("old")
    with pytest.raises(RuntimeError), files.atomic_open(target) as f:
        f.write("half")
        raise RuntimeError("stop")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"]


def test_a_workbook_saves_with_fixed_times_so_the_same_rows_give_the_same_bytes(tmp_path) -> None:
    import zipfile

    from openpyxl import Workbook, load_workbook

    from annols.files import ZIP_TIME, save_workbook

    def saved(name: str):  # type: ignore[no-untyped-def]
        workbook = Workbook(write_only=True)
        sheet = workbook.create_sheet("results")
        sheet.append(["key", "rank"])
        sheet.append(["a:1", 2])
        path = tmp_path / name
        with files.atomic_open(path, "wb") as f:
            save_workbook(workbook, f)
        return path

    first, second = saved("first.xlsx"), saved("second.xlsx")
    with zipfile.ZipFile(first) as archive:
        assert {info.date_time for info in archive.infolist()} == {ZIP_TIME}  # not the time of saving
        core = archive.read("docProps/core.xml").decode()
    assert core.count("2000-01-01T00:00:00Z") == 2  # created and modified
    assert first.read_bytes() == second.read_bytes()
    assert list(load_workbook(first).active.values) == [("key", "rank"), ("a:1", 2)]


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_private_file_is_its_owners_alone_whatever_the_umask_or_the_file_before(tmp_path) -> None:
    old = os.umask(0o022)
    try:
        target = tmp_path / ".annols" / "study.manifest.jsonl"
        files.write_text(target, "secret\n", private=True)
        assert _mode(target) == 0o600 and _mode(target.parent) == 0o700
        target.chmod(0o644)  # a manifest written before: tightened when written again
        target.parent.chmod(0o755)
        files.write_bytes(target, b"secret\n", private=True)
        assert _mode(target) == 0o600 and _mode(target.parent) == 0o700
    finally:
        os.umask(old)


def test_a_folder_the_user_named_is_left_as_it_is_its_files_private(tmp_path) -> None:
    named = tmp_path / "shared-folder"
    named.mkdir(mode=0o755)
    named.chmod(0o755)
    files.write_text(named / "x.manifest.jsonl", "secret\n", private=True)
    assert _mode(named) == 0o755 and _mode(named / "x.manifest.jsonl") == 0o600
    made = tmp_path / "new" / "deeper"
    files.private_folder(made)
    assert _mode(made) == 0o700


def test_every_file_holding_the_secret_or_the_systems_is_owner_only(tmp_path) -> None:
    from annols.study import exports, hidden_judges, manifest, rounds

    folder = tmp_path / ".annols"
    path = manifest.manifest_path(folder, "Study")
    keys = manifest.Keys.new()
    manifest.write_manifest(path, {"protocol": "p", "project": "Study"}, {"p:1": (5, ("a", "b"))}, keys=keys)
    assert _mode(folder) == 0o700 and _mode(path) == 0o600
    out = tmp_path / "exported.jsonl"
    manifest.export_manifest(folder, "Study", out)
    assert _mode(out) == 0o600
    elsewhere = tmp_path / "other" / ".annols"
    manifest.import_manifest(out, elsewhere)
    assert _mode(elsewhere) == 0o700 and _mode(manifest.manifest_path(elsewhere, "Study")) == 0o600
    pulled = tmp_path / "pulled"
    pulled.mkdir()
    written = exports.write_blinding(pulled, [{"task_id": 5, "key": "p:1", "systems": ["a", "b"]}])
    assert _mode(written) == 0o600
    record = manifest.rounds_path(folder, "Study")
    rounds._write(record, [{"round": 1}])
    assert _mode(record) == 0o600
    store = hidden_judges.store_dir(folder, "Study")
    judge = tmp_path / "judge.jsonl"
    judge.write_text("{}\n", encoding="utf-8")
    from annols import protocols

    kept = hidden_judges.store(protocols.load("extractive-ranking"), [judge], store, 7, "Study")
    assert _mode(store) == 0o700 and all(_mode(p) == 0o600 for p in [*kept, store / hidden_judges.PROJECT_FILE])


@pytest.mark.parametrize("kernel", [True, False])
def test_copy_range_copies_the_bytes_asked_for_between_writes(tmp_path, monkeypatch, kernel) -> None:
    """Ranges long enough for the kernel's copy and short ones, between the writer's own writes, in order."""
    if not kernel:
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    data = os.urandom(3 * files._KERNEL_COPY + 123)
    (tmp_path / "source").write_bytes(data)
    with open(tmp_path / "source", "rb") as source, files.atomic_open(tmp_path / "out", "wb") as out:
        out.write(b"head")
        files.copy_range(out, source, 10, 10 + 2 * files._KERNEL_COPY)  # long: the kernel's, where it can
        out.write(b"|")
        files.copy_range(out, source, 5, 9)  # short: read and written
        files.copy_range(out, source, len(data) - files._KERNEL_COPY, len(data))
        with pytest.raises(ValueError, match="ends before byte"):
            files.copy_range(out, source, len(data) - 10, len(data) + files._KERNEL_COPY)
    got = (tmp_path / "out").read_bytes()
    expected = (b"head" + data[10 : 10 + 2 * files._KERNEL_COPY] + b"|" + data[5:9]
                + data[len(data) - files._KERNEL_COPY :])  # fmt: skip
    assert got[: len(expected)] == expected
    assert got[len(expected) :] == data[len(data) - 10 :]  # what there was of the range cut short
