"""`verify-journal --store`'s comparison on its own: the journal's records the floor store
lacks between two it holds are named, not passed over in silence."""
from controller.floor.store.verify import _compare
from controller.journal import Journal


class Stored:
    """What the floor store holds of a table: some of the journal's (seq, hash)."""

    def __init__(self, rows):
        self.rows = rows
        self.last_seq = rows[-1][0] if rows else 0

    def hashes(self):
        return iter(self.rows)

    def last_record(self, kind):
        return None


def test_records_the_store_lacks_in_the_middle_are_named(tmp_path):
    with Journal(tmp_path / "j.db") as j:
        for n in range(30):
            j.append("note", {"n": n})
        records = list(j.records())
        held = [(r.seq, r.hash) for r in records if not 8 <= r.seq <= 12 and r.seq != 20
                and r.seq <= 25]
        check = _compare(j, Stored(held), "T1")
        whole = _compare(j, Stored([(r.seq, r.hash) for r in records]), "T1")
    assert check.ok            # not evidence against the journal: not vouched for either
    assert "the store lacks 6 record(s) of the journal between those (seq 8–12, 20)" \
        in check.text, check.text
    assert "5 later record(s) have not reached the store yet" in check.text
    assert whole.ok and "lacks" not in whole.text and "30 record(s) of table T1 match" \
        in whole.text
