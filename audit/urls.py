from audit.checkpoint_views import (
    CheckpointKeyView,
    CheckpointLatestView,
    CheckpointListView,
    ConsistencyProofView,
    ExportView,
    InclusionProofView,
)
from audit.erasure_views import ErasureDetailView, ErasureListView, RetentionPolicyView
from audit.views import AuditTrailViewSet, LogBatchView, LogView
from config.api import paths, router

router.register("audit-trail", AuditTrailViewSet, basename="audit-trail")

# Before the router's /audit-trail/<id> route (config/urls.py mounts app patterns first).
urlpatterns = [
    *paths("log", LogView.as_view(), "log"),
    *paths("log/batch", LogBatchView.as_view(), "log-batch"),
    *paths("audit-trail/checkpoints", CheckpointListView.as_view(), "audit-checkpoints"),
    *paths("audit-trail/checkpoints/latest", CheckpointLatestView.as_view(), "audit-checkpoint-latest"),
    *paths("audit-trail/checkpoint-key", CheckpointKeyView.as_view(), "audit-checkpoint-key"),
    *paths("audit-trail/proofs/inclusion", InclusionProofView.as_view(), "audit-proof-inclusion"),
    *paths("audit-trail/proofs/consistency", ConsistencyProofView.as_view(), "audit-proof-consistency"),
    *paths("audit-trail/export", ExportView.as_view(), "audit-export"),
    *paths("erasures", ErasureListView.as_view(), "erasures"),
    *paths("erasures/<str:erasure_id>", ErasureDetailView.as_view(), "erasure-detail"),
    *paths("retention-policy", RetentionPolicyView.as_view(), "retention-policy"),
]
