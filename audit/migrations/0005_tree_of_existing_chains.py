"""Build the Merkle tree of every chain that already had entries when the tree was added
(docs/reference/checkpoints.md, "How it is stored"): streamed per customer, nodes written in
chunks, so proofs and checkpoints work for old chains without waiting for their next append."""

from django.db import migrations

CHUNK = 5000


def build_trees(apps, schema_editor):
    from audit import merkle

    ChainHead = apps.get_model("audit", "ChainHead")
    AuditEntry = apps.get_model("audit", "AuditEntry")
    TreeNode = apps.get_model("audit", "TreeNode")
    for customer_id in ChainHead.objects.filter(sequence__gt=0).values_list("customer_id", flat=True):
        if TreeNode.objects.filter(customer_id=customer_id).exists():
            continue
        edge = merkle.CompactRange()
        nodes: list = []
        hashes = (
            AuditEntry.objects.filter(customer_id=customer_id)
            .order_by("sequence")
            .values_list("hash", flat=True)
            .iterator(chunk_size=CHUNK)
        )
        for value in hashes:
            edge.append(bytes.fromhex(value), nodes)
            if len(nodes) >= CHUNK:
                TreeNode.objects.bulk_create(
                    [TreeNode(customer_id=customer_id, level=lv, index=ix, hash=h) for lv, ix, h in nodes]
                )
                nodes = []
        TreeNode.objects.bulk_create(
            [TreeNode(customer_id=customer_id, level=lv, index=ix, hash=h) for lv, ix, h in nodes]
        )


class Migration(migrations.Migration):
    dependencies = [("audit", "0004_merkle_tree_checkpoints")]

    operations = [migrations.RunPython(build_trees, migrations.RunPython.noop)]
