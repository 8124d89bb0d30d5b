import hashlib
import hmac

from controller.release import software


def _tree(tmp_path):
    for part in ("controller/display/templates", "drivers", "simulators", "config/profiles",
                 "deploy", "requirements"):
        (tmp_path / part).mkdir(parents=True)
    (tmp_path / "controller" / "a.py").write_text("x = 1\n")
    (tmp_path / "controller" / "display" / "templates" / "index.html").write_text("<p>")
    (tmp_path / "config" / "profiles" / "p.toml").write_text("decks = 8\n")
    (tmp_path / "deploy" / "tablectl.service").write_text("[Unit]\n")
    return tmp_path


def test_digest_changes_when_any_shipped_file_changes_and_not_for_bytecode(tmp_path):
    root = _tree(tmp_path)
    first = software.release_digest.__wrapped__(root)
    assert first == software.release_digest.__wrapped__(root)
    (root / "controller" / "__pycache__").mkdir()
    (root / "controller" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert software.release_digest.__wrapped__(root) == first
    for changed in ("controller/display/templates/index.html", "config/profiles/p.toml",
                    "deploy/tablectl.service"):
        before = software.release_digest.__wrapped__(root)
        (root / changed).write_text("changed")
        assert software.release_digest.__wrapped__(root) != before, changed
    (root / "controller" / "notes.txt").write_text("a file in a package ships with it")
    assert software.release_digest.__wrapped__(root) != before


def test_a_checkout_names_its_shipped_folders_as_the_wheel_does(tmp_path):
    root = _tree(tmp_path)
    labels = [label for label, _ in software.release_files(root)]
    assert "controller/shipped/config/profiles/p.toml" in labels
    assert "controller/shipped/deploy/tablectl.service" in labels
    # an installed wheel has them inside the package already: they are not taken twice
    (root / "controller" / "shipped" / "config").mkdir(parents=True)
    (root / "controller" / "shipped" / "config" / "table.toml").write_text("")
    labels = [label for label, _ in software.release_files(root)]
    assert "controller/shipped/config/table.toml" in labels
    assert "controller/shipped/config/profiles/p.toml" not in labels


def test_seeded_hmac_is_an_hmac_over_the_release(tmp_path):
    (tmp_path / "controller").mkdir()
    (tmp_path / "controller" / "shipped").mkdir()
    (tmp_path / "controller" / "a.py").write_text("x = 1\n")
    stream = b"controller/a.py\x006\x00x = 1\n"
    assert software.seeded_hmac(b"\x01\x02", tmp_path) == \
        hmac.new(b"\x01\x02", stream, hashlib.sha256).hexdigest()
    assert software.seeded_hmac(b"\x01\x03", tmp_path) != software.seeded_hmac(b"\x01\x02", tmp_path)


def test_the_release_includes_every_kind_of_shipped_file():
    names = {label.rsplit("/", 1)[-1] for label, _ in software.release_files()}
    assert {"core.py", "machine.py", "macau.toml", "table.toml", "dealer.html", "cards.js",
            "display.css", "tablectl.po", "tablectl.pot", "tablectl.service",
            "99-tablectl.rules", "table-pc.txt", "events.schema.json"} <= names
