"""Storage of each customer's Merkle tree (docs/reference/checkpoints.md, "The tree").

One row per complete subtree, (customer, level, index) -> 32-byte hash, written once when the
subtree completes: appending n entries writes about 2n small rows, and a root at any size,
an inclusion proof or a consistency proof is one indexed read of at most a few dozen rows
(the complete subtrees that the RFC's ranges split into), never a rehash of the chain.
"""

from collections.abc import Iterable

from django.db import connection

from audit import merkle
from audit.models import AuditEntry, ChainHead, TreeNode

_TABLE = TreeNode._meta.db_table
_STREAM_CHUNK = 5000


def _nodes_read(customer_id: str, nodes: Iterable[merkle.Node]) -> dict[merkle.Node, bytes]:
    wanted = sorted(set(nodes))
    if not wanted:
        return {}
    values = ", ".join(["(%s, %s)"] * len(wanted))
    params: list[str | int | bytes] = [customer_id]
    for level, index in wanted:
        params += [level, index]
    sql = (
        f'SELECT level, "index", hash FROM {_TABLE} WHERE customer_id = %s '  # noqa: S608
        f'AND (level, "index") IN (VALUES {values})'
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {(level, index): bytes(value) for level, index, value in cursor.fetchall()}


def _nodes_write(customer_id: str, rows: list[tuple[int, int, bytes]]) -> None:
    if not rows:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and len(rows) > 64:
            copy_sql = f'COPY {_TABLE} (customer_id, level, "index", hash) FROM STDIN'
            with cursor.cursor.copy(copy_sql) as copy:
                for level, index, value in rows:
                    copy.write_row((customer_id, level, index, value))
            return
        for at in range(0, len(rows), 200):
            part = rows[at : at + 200]
            params: list[str | int | bytes] = []
            for level, index, value in part:
                params += [customer_id, level, index, value]
            values = ", ".join(["(%s, %s, %s, %s)"] * len(part))
            cursor.execute(
                f'INSERT INTO {_TABLE} (customer_id, level, "index", hash) VALUES {values}',  # noqa: S608
                params,
            )


# One appended leaf's nodes in one statement (PostgreSQL), run right after the chain append in
# the same transaction, which holds the head row: the leaf is the head's new entry (its index
# the head's sequence less one, its hash the head's), and while its index is odd it merges
# with the stored complete subtree to its left, one level up each time, exactly as
# merkle.CompactRange.append does. Returns one row per node written: fewer than
# `leaf_nodes(index)` means a subtree it needed was not stored (tree_append then rebuilds).
APPEND_ONE_SQL = f"""
WITH RECURSIVE head AS (
    SELECT customer_id, sequence - 1 AS leaf, sha256('\\x00'::bytea || decode(head_hash, 'hex')) AS hash
    FROM {ChainHead._meta.db_table} WHERE customer_id = %s
), up (level, "index", hash) AS (
    SELECT 0, head.leaf, head.hash FROM head
    UNION ALL
    SELECT up.level + 1, up."index" >> 1, sha256('\\x01'::bytea || node.hash || up.hash)
    FROM up JOIN {_TABLE} node
        ON node.customer_id = (SELECT customer_id FROM head) AND node.level = up.level
        AND node."index" = up."index" - 1
    WHERE up."index" & 1 = 1
)
INSERT INTO {_TABLE} (customer_id, level, "index", hash)
SELECT head.customer_id, up.level, up."index", up.hash FROM up, head
RETURNING level
"""  # noqa: S608 - the table names are the models'


def leaf_nodes(index: int) -> int:
    """How many nodes appending leaf `index` stores: the leaf and one per trailing 1 bit."""
    return (index ^ (index + 1)).bit_length()


class TreeIncomplete(Exception):
    """Stored nodes are missing for a size the chain has reached."""


def tree_append(
    customer_id: str, start_size: int, entry_hashes: list[str], *, with_root: bool = True
) -> merkle.CompactRange:
    """Add the entries `start_size + 1 ...` (their hex `hash`es, in order) to the customer's
    tree, inside the caller's transaction (which holds the chain head lock, so appends of
    one customer never interleave). Returns the tree's right edge after them; without
    `with_root` only the stored subtrees the append merges are read (none for half of single
    appends), and the edge cannot give the root.

    A chain that has entries without nodes (written before the tree existed) is built
    from its entries first, once."""
    wanted = (
        merkle.range_nodes(0, start_size)
        if with_root
        else merkle.consumed_peaks(start_size, len(entry_hashes))
    )
    found = _nodes_read(customer_id, wanted)
    if len(found) == len(wanted):
        edge = merkle.CompactRange.partial(start_size, found)
    else:
        edge = tree_rebuild(customer_id, start_size)
    appended: list[tuple[int, int, bytes]] = []
    for value in entry_hashes:
        edge.append(bytes.fromhex(value), appended)
    _nodes_write(customer_id, appended)
    return edge


def tree_rebuild(customer_id: str, size: int) -> merkle.CompactRange:
    """Recompute and store the customer's tree from its first `size` entries' hashes."""
    TreeNode.objects.filter(customer_id=customer_id).delete()
    edge = merkle.CompactRange()
    hashes = (
        AuditEntry.objects.filter(customer_id=customer_id, sequence__lte=size)
        .order_by("sequence")
        .values_list("hash", flat=True)
        .iterator(chunk_size=_STREAM_CHUNK)
    )
    appended: list[tuple[int, int, bytes]] = []
    for value in hashes:
        edge.append(bytes.fromhex(value), appended)
        if len(appended) >= _STREAM_CHUNK:
            _nodes_write(customer_id, appended)
            appended = []
    _nodes_write(customer_id, appended)
    if edge.size != size:
        raise TreeIncomplete(f"chain of {customer_id} has {edge.size} entries, not {size}")
    return edge


def _ranges_hashes(customer_id: str, ranges: list[tuple[int, int]]) -> list[bytes]:
    found = _nodes_read(customer_id, merkle.nodes_for(ranges))

    def lookup(node: merkle.Node) -> bytes:
        if node not in found:
            raise TreeIncomplete(f"tree of {customer_id} lacks node {node}")
        return found[node]

    return [merkle.range_hash(start, end, lookup) for start, end in ranges]


def root_at(customer_id: str, size: int) -> bytes:
    """The tree hash at `size` from stored nodes (SHA-256 of nothing for size 0)."""
    if size == 0:
        return merkle.CompactRange().root()
    return _ranges_hashes(customer_id, [(0, size)])[0]


def inclusion(customer_id: str, index: int, size: int) -> tuple[bytes, list[bytes]]:
    """(leaf hash, inclusion path) of leaf `index` in the tree of `size` leaves: one read."""
    leaf, *path = _ranges_hashes(customer_id, [(index, index + 1), *merkle.inclusion_ranges(index, size)])
    return leaf, path


def consistency_proof(customer_id: str, first: int, second: int) -> list[bytes]:
    return _ranges_hashes(customer_id, merkle.consistency_ranges(first, second))
