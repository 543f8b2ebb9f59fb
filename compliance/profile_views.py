"""GET /system-profiles, GET/PUT/PATCH /system-profiles/:model_id (docs/reference/system-profiles.md)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from compliance import profiles
from compliance.models import PROFILE_FIELDS
from compliance.profile_inputs import SystemProfileInput, SystemProfilePatchInput
from config.api import PagePagination, TenantAPIView
from config.bodymodels import body_parse
from config.exceptions import ValidationFailed
from config.scopes import Scope

MODEL_ID_MAX = 256


class SystemProfileOutput(serializers.Serializer):
    model_id = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    purpose = serializers.CharField(allow_blank=True)
    deployment_context = serializers.CharField(allow_blank=True)
    provider = serializers.CharField(allow_blank=True)
    version = serializers.CharField(allow_blank=True)
    intended_reviewers = serializers.CharField(allow_blank=True)
    not_provided = serializers.ListField(
        child=serializers.ChoiceField(choices=list(PROFILE_FIELDS)),
        help_text="The fields left empty: the reports print them as not provided",
    )
    updated_at = serializers.CharField(allow_null=True, help_text="Null: no profile was written yet")
    updated_by = serializers.CharField(allow_null=True, help_text="api:<key id> or staff:<username>")


def _by(request) -> str:
    return f"api:{request.auth.pk}" if request.auth is not None else ""


def _model_id(model_id: str) -> str:
    if len(model_id) > MODEL_ID_MAX:
        raise ValidationFailed(
            f"model_id must be at most {MODEL_ID_MAX} characters",
            errors=[{"field": "model_id", "message": f"must be at most {MODEL_ID_MAX} characters"}],
        )
    return model_id


class SystemProfileListView(TenantAPIView):
    scopes = {"get": Scope.READ}
    pagination_class = PagePagination  # the schema shows the paged envelope the answer has

    @extend_schema(responses=SystemProfileOutput(many=True), operation_id="system_profiles_list")
    def get(self, request):
        """The customer's models (every model id its decisions name, and every model with a
        profile), by model id, each with its profile (empty fields where none was written)."""
        paginator = PagePagination()
        page = paginator.paginate_queryset(profiles.profile_list(customer=self.customer), request, self)
        return paginator.get_paginated_response([profile.as_dict() for profile in page or []])


class SystemProfileView(TenantAPIView):
    scopes = {"get": Scope.READ, "put": Scope.MANAGE, "patch": Scope.MANAGE}

    @extend_schema(responses=SystemProfileOutput, operation_id="system_profile_retrieve")
    def get(self, request, model_id: str):
        profile = profiles.profile_get(customer=self.customer, model_id=_model_id(model_id))
        return Response(profile.as_dict())

    @extend_schema(
        request=SystemProfileInput,
        responses={200: SystemProfileOutput, 201: SystemProfileOutput},
        operation_id="system_profile_replace",
        description="Write the whole profile (201 when the model had none); a field left out is emptied.",
    )
    def put(self, request, model_id: str):
        body = body_parse(SystemProfileInput, request.data)
        return self._save(request, model_id, body.model_dump(), replace=True)

    @extend_schema(
        request=SystemProfilePatchInput,
        responses={200: SystemProfileOutput, 201: SystemProfileOutput},
        operation_id="system_profile_update",
        description="Change the fields sent (null or an empty string clears one); the others stay.",
    )
    def patch(self, request, model_id: str):
        body = body_parse(SystemProfilePatchInput, request.data)
        return self._save(request, model_id, body.sent(), replace=False)

    def _save(self, request, model_id: str, changes: dict, *, replace: bool) -> Response:
        profile, created = profiles.profile_save(
            customer=self.customer,
            model_id=_model_id(model_id),
            changes=changes,
            replace=replace,
            by=_by(request),
        )
        return Response(profile.as_dict(), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
