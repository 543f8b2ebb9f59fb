"""A test-only URLconf whose list view is tenant-based in form but leaks in fact: its list reads
every customer's decisions. The behavioural walk of tests/system/test_tenancy.py must catch it."""

from django.urls import include, path
from rest_framework.response import Response

from audit.models import Decision
from config.api import TenantViewSet
from config.scopes import Scope


class LeakyDecisions(TenantViewSet):
    queryset = Decision.objects.all()
    scopes = {"list": Scope.READ}

    def list(self, request):
        # The bug this module stands for: a list that skips self.get_queryset().
        return Response({"data": list(Decision.objects.values("decision_id", "user_id"))})


urlpatterns = [
    path("v1/leaky-decisions", LeakyDecisions.as_view({"get": "list"})),
    path("", include("config.urls")),
]
