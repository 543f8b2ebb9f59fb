"""The RFC 9162 (RFC 6962) Merkle tree of a customer's audit trail, as plain functions.

Leaf i of the tree is entry i + 1's 32-byte `hash`: leaf hash = SHA-256(0x00 || hash),
interior node = SHA-256(0x01 || left || right). A node is addressed by (level, index): the
complete subtree of the 2**level leaves [index * 2**level, (index + 1) * 2**level). Every
hash a root or a proof needs is the hash of a range [start, end) of leaves that the RFC's
recursion produces; such a range splits into at most one complete subtree per bit of its
width, so it is computed from a few stored nodes (docs/reference/checkpoints.md, "The tree").

No Django here: the offline verifier (audit/offline_verify.py) imports this module.
"""

import hashlib
from collections.abc import Callable, Iterable

Node = tuple[int, int]  # (level, index)


def leaf_hash(entry_hash: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry_hash).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(width: int) -> int:
    """The largest power of two strictly below `width` (width >= 2)."""
    return 1 << ((width - 1).bit_length() - 1)


def range_nodes(start: int, end: int) -> list[Node]:
    """The complete subtrees that make up [start, end), left to right. `start` is aligned
    to the largest of them (true of every range of the RFC's recursion and of [0, size))."""
    nodes: list[Node] = []
    at = start
    for level in range((end - start).bit_length() - 1, -1, -1):
        if (end - start) >> level & 1:
            assert at % (1 << level) == 0, (start, end)
            nodes.append((level, at >> level))
            at += 1 << level
    return nodes


def fold(hashes: list[bytes]) -> bytes:
    """The hash of a range from its complete subtrees' hashes (left to right): the RFC
    splits at the largest power of two, so the rightmost pieces combine first."""
    root = hashes[-1]
    for left in reversed(hashes[:-1]):
        root = node_hash(left, root)
    return root


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges whose hashes form the RFC 9162 inclusion path of leaf `index` in a tree of
    `size` leaves (section 2.1.3.1), in proof order (leaf upwards)."""
    ranges: list[tuple[int, int]] = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
    ranges.reverse()
    return ranges


def consistency_ranges(first: int, second: int) -> list[tuple[int, int]]:
    """The ranges whose hashes form the RFC 9162 consistency proof from size `first` to
    size `second` (section 2.1.4.1, SUBPROOF), in proof order. Empty when first == second."""
    if first == second:
        return []
    ranges: list[tuple[int, int]] = []
    m, start, end, complete = first, 0, second, True
    while True:
        width = end - start
        if m == width:
            if not complete:
                ranges.append((start, end))
            break
        k = _split(width)
        if m <= k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            m -= k
            start += k
            complete = False
    ranges.reverse()
    return ranges


def nodes_for(ranges: Iterable[tuple[int, int]]) -> set[Node]:
    return {node for start, end in ranges for node in range_nodes(start, end)}


def range_hash(start: int, end: int, lookup: Callable[[Node], bytes]) -> bytes:
    return fold([lookup(node) for node in range_nodes(start, end)])


class CompactRange:
    """The right edge of a growing tree: the hashes of the complete subtrees [0, size)
    splits into (at most one per bit of size). Appending a leaf merges equal-sized
    subtrees, and `appended` reports every node that became complete on the way, which is
    exactly what storing the tree needs."""

    def __init__(self, size: int = 0, peaks: list[bytes] | None = None) -> None:
        self.size = size
        self.peaks: list[tuple[int, int, bytes]] = []  # (level, index, hash), left to right
        if size:
            assert peaks is not None and len(peaks) == bin(size).count("1")
            self.peaks = [(lv, ix, h) for (lv, ix), h in zip(range_nodes(0, size), peaks, strict=True)]

    @classmethod
    def partial(cls, size: int, known: dict[Node, bytes]) -> "CompactRange":
        """The right edge at `size` with only some subtrees' hashes known (the others stand
        as empty bytes): enough to append when `known` holds `consumed_peaks`' nodes."""
        edge = cls()
        edge.size = size
        edge.peaks = [(lv, ix, known.get((lv, ix), b"")) for lv, ix in range_nodes(0, size)]
        return edge

    def append(self, entry_hash: bytes, appended: list[tuple[int, int, bytes]] | None = None) -> None:
        level, index, value = 0, self.size, leaf_hash(entry_hash)
        if appended is not None:
            appended.append((level, index, value))
        while index & 1:
            _, _, left = self.peaks.pop()
            assert left, "a subtree this append merges was not read"
            level, index, value = level + 1, index >> 1, node_hash(left, value)
            if appended is not None:
                appended.append((level, index, value))
        self.peaks.append((level, index, value))
        self.size += 1

    def root(self) -> bytes:
        if not self.peaks:
            return hashlib.sha256(b"").digest()
        assert all(value for _, _, value in self.peaks), "the root needs every subtree"
        return fold([value for _, _, value in self.peaks])


def consumed_peaks(size: int, count: int) -> list[Node]:
    """The complete subtrees of [0, size) that appending `count` leaves merges into new nodes:
    the only stored hashes an append needs (none when `size` is even and one leaf comes)."""
    stack = [(level, index, True) for level, index in range_nodes(0, size)]
    consumed: list[Node] = []
    for leaf in range(size, size + count):
        level, index = 0, leaf
        while index & 1:
            peak_level, peak_index, original = stack.pop()
            if original:
                consumed.append((peak_level, peak_index))
            level, index = level + 1, index >> 1
        stack.append((level, index, False))
    return consumed


def verify_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes], root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2: does `proof` place the leaf hash `leaf` at `index` in the
    tree of `size` leaves whose hash is `root`?"""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root
