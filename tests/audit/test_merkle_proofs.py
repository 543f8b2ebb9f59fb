"""The audit tree and its proofs, checked by an RFC 9162 verifier written here from the RFC
alone (sections 2.1.1, 2.1.3.2 and 2.1.4.2), independent of audit/merkle.py: the tree hash
of every size, and inclusion and consistency proofs for every leaf and size pair of small
trees, over HTTP, from stored nodes; a wrong root fails."""

import base64
import hashlib

import pytest

from audit import merkle
from audit.models import AuditEntry, TreeNode
from tests.audit.factories import decision_body

pytestmark = pytest.mark.django_db


# --- an RFC 9162 reference, written from the RFC text -------------------------------------
def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def rfc_mth(leaves: list[bytes]) -> bytes:
    """MTH(D[n]) of section 2.1.1."""
    n = len(leaves)
    if n == 0:
        return _h(b"")
    if n == 1:
        return _h(b"\x00" + leaves[0])
    k = 1
    while k * 2 < n:
        k *= 2
    return _h(b"\x01" + rfc_mth(leaves[:k]) + rfc_mth(leaves[k:]))


def rfc_verify_inclusion(index: int, size: int, leaf_hash: bytes, path: list[bytes], root: bytes) -> bool:
    """Section 2.1.3.2, step by step."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf_hash
    for p in path:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = _h(b"\x01" + p + r)
            if fn % 2 == 0:
                while not (fn % 2 == 1 or fn == 0):
                    fn, sn = fn // 2, sn // 2
        else:
            r = _h(b"\x01" + r + p)
        fn, sn = fn // 2, sn // 2
    return sn == 0 and r == root


def rfc_verify_consistency(
    first: int, second: int, path: list[bytes], first_root: bytes, second_root: bytes
) -> bool:
    """Section 2.1.4.2, step by step."""
    if first == second:
        return not path and first_root == second_root
    if not path or first > second:
        return False
    if first & (first - 1) == 0:  # a power of two: the first tree is the first subtree
        path = [first_root, *path]
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:
        fn, sn = fn // 2, sn // 2
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = _h(b"\x01" + c + fr)
            sr = _h(b"\x01" + c + sr)
            if fn % 2 == 0:
                while not (fn % 2 == 1 or fn == 0):
                    fn, sn = fn // 2, sn // 2
        else:
            sr = _h(b"\x01" + sr + c)
        fn, sn = fn // 2, sn // 2
    return fr == first_root and sr == second_root and sn == 0


# --- pure: audit/merkle.py against the reference ----------------------------------------
LEAVES = [hashlib.sha256(str(i).encode()).digest() for i in range(40)]


@pytest.mark.parametrize("size", range(0, 40))
def test_compact_range_root_equals_the_rfc_tree_hash(size):
    edge = merkle.CompactRange()
    for leaf in LEAVES[:size]:
        edge.append(leaf)
    assert edge.root() == rfc_mth(LEAVES[:size])


def _stored(size: int) -> dict[merkle.Node, bytes]:
    edge, nodes = merkle.CompactRange(), []
    for leaf in LEAVES[:size]:
        edge.append(leaf, nodes)
    return {(level, index): value for level, index, value in nodes}


@pytest.mark.parametrize("size", range(1, 34))
def test_every_inclusion_and_consistency_proof_of_small_trees_verifies(size):
    stored = _stored(size)
    root = rfc_mth(LEAVES[:size])
    for index in range(size):
        path = [merkle.range_hash(a, b, stored.__getitem__) for a, b in merkle.inclusion_ranges(index, size)]
        leaf = _h(b"\x00" + LEAVES[index])
        assert rfc_verify_inclusion(index, size, leaf, path, root)
        assert not rfc_verify_inclusion(index, size, leaf, path, _h(b"wrong"))
    for first in range(1, size + 1):
        path = [
            merkle.range_hash(a, b, stored.__getitem__) for a, b in merkle.consistency_ranges(first, size)
        ]
        first_root = rfc_mth(LEAVES[:first])
        assert rfc_verify_consistency(first, size, path, first_root, root), (first, size)
        if first < size:
            assert not rfc_verify_consistency(first, size, path, first_root, _h(b"wrong"))
            assert not rfc_verify_consistency(first, size, path, _h(b"wrong"), root)


@pytest.mark.parametrize("size", range(0, 34))
def test_an_append_reading_only_the_subtrees_it_merges_writes_the_same_nodes(size):
    full = _stored(40)
    for count in (1, 2, 3, 6):
        if size + count > 40:
            continue
        wanted = merkle.consumed_peaks(size, count)
        assert set(wanted) <= set(merkle.range_nodes(0, size))
        edge, written = merkle.CompactRange.partial(size, {node: full[node] for node in wanted}), []
        for leaf in LEAVES[size : size + count]:
            edge.append(leaf, written)
        assert all(full[(level, index)] == value for level, index, value in written)
        assert len(written) == len(_stored(size + count)) - len(_stored(size))
    if size % 2 == 0:  # half of single appends read nothing
        assert merkle.consumed_peaks(size, 1) == []


# --- over HTTP, from the stored tree -------------------------------------------------------
def _b(value: str) -> bytes:
    return base64.b64decode(value)


def _entry_hashes(api) -> list[bytes]:
    rows = api.get("/v1/audit-trail?limit=100").json()["data"]
    return [bytes.fromhex(row["hash"]) for row in sorted(rows, key=lambda row: row["sequence"])]


def test_proofs_over_http_for_every_leaf_and_size_pair_verify_against_the_recomputed_root(api):
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(6)]}, format="json")
    for _ in range(5):  # single appends extend the same tree
        assert api.post("/v1/log", decision_body(), format="json").status_code == 201
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(2)]}, format="json")
    leaves = _entry_hashes(api)
    assert len(leaves) == 13
    for size in range(1, 14):
        root = rfc_mth(leaves[:size])
        for sequence in range(1, size + 1):
            body = api.get(f"/v1/audit-trail/proofs/inclusion?sequence={sequence}&tree_size={size}").json()
            assert (
                body["sequence"] == sequence
                and body["leaf_index"] == sequence - 1
                and body["tree_size"] == size
            )
            assert _b(body["leaf_hash"]) == _h(b"\x00" + leaves[sequence - 1])
            path = [_b(h) for h in body["hashes"]]
            assert rfc_verify_inclusion(sequence - 1, size, _b(body["leaf_hash"]), path, root)
            assert not rfc_verify_inclusion(sequence - 1, size, _b(body["leaf_hash"]), path, _h(b"x"))
        for first in range(1, size + 1):
            body = api.get(f"/v1/audit-trail/proofs/consistency?first={first}&second={size}").json()
            assert (body["first"], body["second"]) == (first, size)
            path = [_b(h) for h in body["hashes"]]
            assert rfc_verify_consistency(first, size, path, rfc_mth(leaves[:first]), root)
            if first < size:
                assert not rfc_verify_consistency(first, size, path, rfc_mth(leaves[:first]), _h(b"x"))
    # About two stored nodes per entry: the tree is stored, never recomputed per request.
    assert TreeNode.objects.filter(customer_id="acme").count() == 13 + 6 + 3 + 1


def test_a_chain_written_before_the_tree_existed_is_built_on_its_next_append(api):
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(5)]}, format="json")
    TreeNode.objects.all().delete()
    assert api.post("/v1/log", decision_body(), format="json").status_code == 201
    leaves = _entry_hashes(api)
    body = api.get("/v1/audit-trail/proofs/inclusion?sequence=2&tree_size=6").json()
    path = [_b(h) for h in body["hashes"]]
    assert rfc_verify_inclusion(1, 6, _h(b"\x00" + leaves[1]), path, rfc_mth(leaves))
    assert AuditEntry.objects.filter(customer_id="acme").count() == 6


def test_a_chain_without_its_tree_is_built_when_a_few_entries_are_appended_at_once(api):
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(5)]}, format="json")
    TreeNode.objects.all().delete()
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(3)]}, format="json")
    leaves = _entry_hashes(api)
    assert len(leaves) == 8
    for sequence in (2, 7, 8):
        body = api.get(f"/v1/audit-trail/proofs/inclusion?sequence={sequence}&tree_size=8").json()
        path = [_b(h) for h in body["hashes"]]
        assert rfc_verify_inclusion(
            sequence - 1, 8, _h(b"\x00" + leaves[sequence - 1]), path, rfc_mth(leaves)
        )
    assert TreeNode.objects.filter(customer_id="acme").count() == 8 + 4 + 2 + 1


@pytest.mark.parametrize(
    "query",
    [
        "sequence=4&tree_size=3",  # S > N
        "sequence=1&tree_size=4",  # N beyond the trail
        "sequence=0&tree_size=2",
        "sequence=1",
        "sequence=x&tree_size=2",
        "sequence=-1&tree_size=2",
    ],
)
def test_inclusion_out_of_range_is_400(api, query):
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(3)]}, format="json")
    response = api.get(f"/v1/audit-trail/proofs/inclusion?{query}")
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize(
    "query", ["first=3&second=2", "first=1&second=4", "first=0&second=2", "second=2", ""]
)
def test_consistency_out_of_range_is_400_and_equal_sizes_have_an_empty_proof(api, query):
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(3)]}, format="json")
    response = api.get(f"/v1/audit-trail/proofs/consistency?{query}")
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"
    same = api.get("/v1/audit-trail/proofs/consistency?first=3&second=3").json()
    assert same == {"first": 3, "second": 3, "hashes": []}


def test_another_customers_tree_is_not_reachable(api, other_api):
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(3)]}, format="json")
    assert other_api.get("/v1/audit-trail/proofs/inclusion?sequence=1&tree_size=1").status_code == 400
    assert other_api.get("/v1/audit-trail/proofs/consistency?first=1&second=2").status_code == 400


def test_the_migration_builds_the_tree_of_chains_written_before_it(api):
    import importlib

    from django.apps import apps

    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(13)]}, format="json")
    TreeNode.objects.all().delete()
    importlib.import_module("audit.migrations.0005_tree_of_existing_chains").build_trees(apps, None)
    leaves = _entry_hashes(api)
    assert TreeNode.objects.filter(customer_id="acme").count() == 13 + 6 + 3 + 1
    body = api.get("/v1/audit-trail/proofs/inclusion?sequence=5&tree_size=13").json()
    path = [_b(h) for h in body["hashes"]]
    assert rfc_verify_inclusion(4, 13, _h(b"\x00" + leaves[4]), path, rfc_mth(leaves))
