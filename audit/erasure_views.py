"""POST/GET /erasures, GET /erasures/:id, PUT/GET /retention-policy (docs/reference/erasure.md)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from audit import erasure as erasures
from audit import retention
from audit.erasure_inputs import ErasureInput, RetentionPolicyInput
from audit.exceptions import ErasureLegalHold
from audit.models_erasure import Erasure, RetentionPolicy
from config.api import PagePagination, TenantAPIView
from config.bodymodels import body_parse
from config.jsondoc import JSONObject
from config.scopes import Scope
from config.timeutils import isoformat


class ErasureOutput(serializers.Serializer[dict[str, object]]):
    erasure_id = serializers.CharField()
    status = serializers.ChoiceField(choices=["completed", "scheduled", "running", "refused"])
    target = serializers.ChoiceField(choices=["subject_id", "user_id", "retention"])
    entries = serializers.IntegerField(help_text="Entries whose personal part it erased (or will)")
    entries_done = serializers.IntegerField(help_text="Entries erased so far (a running erasure's progress)")
    sequences = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))
    legal_basis = serializers.CharField()
    reason = serializers.CharField()
    pseudonym = serializers.CharField(allow_null=True, help_text="erased:<8 hex>, for an erased user_id")
    entry_sequence = serializers.IntegerField(allow_null=True, help_text="Its `erasure` entry")
    execute_after = serializers.CharField(allow_null=True)
    created_at = serializers.CharField()
    completed_at = serializers.CharField(allow_null=True)
    repeated = serializers.BooleanField(help_text="The same request again: nothing more was erased")
    covered_by = serializers.CharField(
        allow_null=True,
        help_text="A scheduled request completed by a later erasure of the same person: its id",
    )


# the erasure's document by name, rendered as JSON
def erasure_payload(erasure: Erasure, *, repeated: bool = False) -> JSONObject:
    return {
        "erasure_id": erasure.pk,
        "status": erasure.status,
        "target": erasure.target,
        "entries": erasure.entries,
        "entries_done": erasure.entries
        if erasure.status == Erasure.Status.COMPLETED
        else erasure.entries_done,
        "sequences": erasure.sequences,
        "legal_basis": erasure.legal_basis,
        "reason": erasure.reason,
        "pseudonym": erasure.pseudonym,
        "entry_sequence": erasure.entry_sequence,
        "execute_after": isoformat(erasure.execute_after) if erasure.execute_after else None,
        "created_at": isoformat(erasure.created_at),
        "completed_at": isoformat(erasure.completed_at) if erasure.completed_at else None,
        "repeated": repeated,
        "covered_by": erasure.covered_by,
    }


class ErasureListView(TenantAPIView):
    scopes = {"get": Scope.READ, "post": Scope.MANAGE}
    pagination_class = PagePagination

    @extend_schema(responses=ErasureOutput(many=True))
    def get(self, request: Request) -> Response:
        """The customer's erasures, newest first (refused ones included)."""
        paginator = PagePagination()
        page = paginator.paginate_queryset(erasures.erasures_list(customer=self.customer), request, self)
        return paginator.get_paginated_response([erasure_payload(e) for e in page or []])

    @extend_schema(
        request=ErasureInput,
        responses={202: ErasureOutput, 200: ErasureOutput},
        description=(
            "Erase the personal part of every entry of a subject_id or user_id (202: completed, "
            "scheduled, or running on a worker when it reaches many entries); the same request again, "
            "or while it runs, erases nothing more (200, repeated). Under legal hold: 409 "
            "ERASURE_LEGAL_HOLD, recorded as refused."
        ),
    )
    def post(self, request: Request) -> Response:
        data = body_parse(ErasureInput, request.data)
        target, value = data.target()
        result = erasures.erasure_request(
            customer=self.customer,
            target=target,
            value=value,
            reason=data.reason,
            legal_basis=data.legal_basis,
            override_minimum=data.override_minimum,
            requested_by=f"api key {getattr(request.auth, 'pk', '')}".strip(),
        )
        code = status.HTTP_202_ACCEPTED if result.created else status.HTTP_200_OK
        return Response(erasure_payload(result.erasure, repeated=not result.created), status=code)


class ErasureDetailView(TenantAPIView):
    scopes = {"get": Scope.READ}

    @extend_schema(responses=ErasureOutput)
    def get(self, request: Request, erasure_id: str) -> Response:
        return Response(erasure_payload(erasures.erasure_get(customer=self.customer, erasure_id=erasure_id)))


class RetentionPolicyOutput(serializers.Serializer[dict[str, object]]):
    min_days = serializers.IntegerField()
    max_days = serializers.IntegerField(allow_null=True)
    legal_hold = serializers.BooleanField()
    changed_at = serializers.CharField(
        allow_null=True, help_text="When the policy last changed (null: never, the defaults)"
    )


def _policy(policy: RetentionPolicy) -> dict[str, int | bool | str | None]:
    changed = None if policy.updated_at is None else isoformat(policy.updated_at)
    return {**retention.policy_values(policy), "changed_at": changed}


class RetentionPolicyView(TenantAPIView):
    scopes = {"get": Scope.READ, "put": Scope.MANAGE}

    @extend_schema(responses=RetentionPolicyOutput)
    def get(self, request: Request) -> Response:
        return Response(_policy(retention.retention_policy_get(customer=self.customer)))

    @extend_schema(request=RetentionPolicyInput, responses=RetentionPolicyOutput)
    def put(self, request: Request) -> Response:
        data = body_parse(RetentionPolicyInput, request.data)
        policy = retention.retention_policy_set(
            customer=self.customer,
            min_days=data.min_days,
            max_days=data.max_days,
            legal_hold=data.legal_hold,
            key_id=str(getattr(request.auth, "pk", "")),
        )
        return Response(_policy(policy))


__all__ = ["ErasureDetailView", "ErasureLegalHold", "ErasureListView", "RetentionPolicyView"]
