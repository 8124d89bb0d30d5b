"""The software a table runs: its dependencies' files are part of what is hashed, and what a
lab approves is checked at start against a list or a manifest signed with an SSH key."""
import shutil
import subprocess
from importlib import metadata

import pytest

from controller.release import software


def _fake_dependency(tmp_path, monkeypatch, content: str):
    """A project root whose one dependency, `fakedep`, installed one module."""
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["fakedep>=1", "testonly; extra == \'test\'"]\n')
    site = tmp_path / "site"
    info = site / "fakedep-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Name: fakedep\nVersion: 1.0\n")
    (info / "RECORD").write_text("fakedep.py,,\nfakedep-1.0.dist-info/METADATA,,\n"
                                 "fakedep-1.0.dist-info/RECORD,,\n")
    (site / "fakedep.py").write_text(content)
    real = metadata.distribution

    def distribution(name):
        if name == "fakedep":
            return metadata.PathDistribution(info)
        if name == "testonly":
            pytest.fail("a requirement of an extra is not part of the software")
        return real(name)
    monkeypatch.setattr(metadata, "distribution", distribution)
    return root


def test_the_dependencies_installed_files_are_hashed(tmp_path, monkeypatch):
    root = _fake_dependency(tmp_path, monkeypatch, "x = 1\n")
    assert [label for label, _ in software.dependency_files(root)] == ["fakedep==1.0/fakedep.py"]
    first = software.dependencies_digest.__wrapped__(root)
    (tmp_path / "site" / "fakedep.py").write_text("x = 2\n")       # a dependency patched
    second = software.dependencies_digest.__wrapped__(root)
    assert first != second
    assert software.software_digest("r", first) != software.software_digest("r", second)


def test_the_real_dependencies_are_covered():
    labels = [label for label, _ in software.dependency_files()]
    assert any(label.startswith("pyserial==") and label.endswith("serialutil.py")
               for label in labels)
    assert not any(".dist-info/" in label or label.endswith(".pyc") for label in labels)


def test_approval_from_the_configured_list():
    sha = "ab" * 32
    assert software.approval(sha, approved=(sha,)).status == "approved"
    refused = software.approval(sha, approved=("cd" * 32,))
    assert refused.status == "unapproved" and "not in [software] approved" in refused.detail
    assert software.approval(sha).status == "unchecked"


needs_ssh = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="no ssh-keygen")


@needs_ssh
def test_a_signed_manifest_approves_and_a_changed_one_does_not(tmp_path):
    key = tmp_path / "lab"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "lab", "-f", str(key)],
                   check=True)
    signers = tmp_path / "allowed_signers"
    key_type, key_text = (tmp_path / "lab.pub").read_text().split()[:2]
    signers.write_text(f"lab@example {key_type} {key_text}\n")
    sha, other = "ab" * 32, "cd" * 32
    manifest = tmp_path / "approved.txt"
    manifest.write_text(f"# release 0.1.0, approved by the lab\n{sha}  tablectl 0.1.0\n")
    subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-n", software.MANIFEST_NAMESPACE, "-f",
                    str(key), str(manifest)], check=True, capture_output=True)
    ok = software.approval(sha, manifest=str(manifest), allowed_signers=str(signers))
    assert ok.status == "approved" and "lab@example" in ok.source
    assert software.approval(other, manifest=str(manifest),
                             allowed_signers=str(signers)).status == "unapproved"
    # a hash slipped into the signed file afterwards: the signature no longer verifies
    manifest.write_text(manifest.read_text() + f"{other}\n")
    forged = software.approval(other, manifest=str(manifest), allowed_signers=str(signers))
    assert forged.status == "unapproved" and "does not verify" in forged.detail
    # no signature at all
    (tmp_path / "approved.txt.sig").unlink()
    assert "no such file" in software.approval(sha, manifest=str(manifest),
                                               allowed_signers=str(signers)).detail


def test_the_identity_worked_out_apart_is_the_one_worked_out_in_process():
    """A table that deals while the software is hashed has it hashed by a low-priority child:
    the child's answer is the table's own identity, digest for digest."""
    assert software.identity_apart() == software.identity()


def test_a_child_that_cannot_answer_is_one_line_and_the_table_falls_back(monkeypatch):
    from controller.service import tablepc
    monkeypatch.setattr(software.sys, "executable", "/nonexistent/python")
    with pytest.raises(RuntimeError, match="cannot start /nonexistent/python"):
        software.identity_apart()
    info: dict = {}
    tablepc._identify(info)             # the same identity, hashed in process instead
    assert info["software_sha256"] == software.identity()["software_sha256"]


def test_a_child_that_fails_says_how_in_one_line(monkeypatch):
    monkeypatch.setattr(software, "_CHILD", "raise SystemExit('no lock here')")
    with pytest.raises(RuntimeError, match=r"exited 1: no lock here$"):
        software.identity_apart()
    monkeypatch.setattr(software, "_CHILD", "print('[1, 2]')")
    with pytest.raises(RuntimeError, match="has no software_sha256"):
        software.identity_apart()
