import hashlib
import hmac

from controller import software


def test_digest_changes_when_any_source_file_changes(tmp_path):
    for part in ("controller", "drivers", "simulators", "config/profiles"):
        (tmp_path / part).mkdir(parents=True)
    (tmp_path / "controller" / "a.py").write_text("x = 1\n")
    (tmp_path / "config" / "profiles" / "p.toml").write_text("decks = 8\n")
    (tmp_path / "controller" / "notes.txt").write_text("not part of the release")
    first = software.release_digest.__wrapped__(tmp_path)
    assert first == software.release_digest.__wrapped__(tmp_path)
    (tmp_path / "controller" / "notes.txt").write_text("changed")
    assert software.release_digest.__wrapped__(tmp_path) == first
    (tmp_path / "config" / "profiles" / "p.toml").write_text("decks = 6\n")
    assert software.release_digest.__wrapped__(tmp_path) != first


def test_seeded_hmac_is_an_hmac_over_the_release(tmp_path):
    (tmp_path / "controller").mkdir()
    (tmp_path / "controller" / "a.py").write_text("x = 1\n")
    stream = b"controller/a.py\x006\x00x = 1\n"
    assert software.seeded_hmac(b"\x01\x02", tmp_path) == \
        hmac.new(b"\x01\x02", stream, hashlib.sha256).hexdigest()
    assert software.seeded_hmac(b"\x01\x03", tmp_path) != software.seeded_hmac(b"\x01\x02", tmp_path)


def test_the_release_includes_the_table_and_the_profiles():
    names = {p.name for p in software.source_files()}
    assert {"core.py", "machine.py", "macau.toml", "base.py"} <= names
