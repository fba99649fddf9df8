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
